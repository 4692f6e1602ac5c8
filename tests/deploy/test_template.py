"""deploy/cloudformation: cfn-lint clean, the reviewer's checks pass, the control plane's role
holds exactly docs/aws-permissions.md, and the outputs give the SSM command."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import boto3
import pytest
from cfnlint.api import lint, lint_file

from podplane.domain.aws_policy import POLICY
from tests.deploy.guard import violations
from tests.deploy.templates import MAIN, ROOT, load, templates
from tests.permissions.test_policy_doc import doc_policy

sys.path.insert(0, str(ROOT / "deploy"))
import render_policy  # noqa: E402


@pytest.mark.parametrize("path", templates(), ids=lambda p: p.name)
def test_cfn_lint_finds_nothing(path: Path) -> None:
    assert [str(m) for m in lint_file(path)] == []


def test_cfn_lint_does_report_a_broken_template() -> None:
    broken = MAIN.read_text().replace("StorageEncrypted: true", "StorageEncrypted: maybe")
    assert any("maybe" in str(m) for m in lint(broken))


@pytest.mark.parametrize("path", templates(), ids=lambda p: p.name)
def test_the_security_checks_pass(path: Path) -> None:
    assert violations(load(path)) == []


def test_the_role_policy_is_the_documented_one_and_nothing_more() -> None:
    resources = load()["Resources"]
    document = resources["ControlPlanePolicy"]["Properties"]["PolicyDocument"]
    assert document == POLICY == doc_policy()
    role = resources["ControlPlaneRole"]["Properties"]
    assert role["ManagedPolicyArns"] == [{"Ref": "ControlPlanePolicy"}]
    assert "Policies" not in role  # no inline policy beside it


def test_the_template_is_what_render_policy_writes() -> None:
    text = MAIN.read_text()
    assert render_policy.render(text, POLICY) == text
    assert render_policy.main(["--check", str(MAIN)]) == 0


def test_render_policy_check_fails_on_a_drifted_template(tmp_path: Path) -> None:
    drifted = tmp_path / "t.yaml"
    drifted.write_text(MAIN.read_text().replace("- eks:ListClusters\n", ""))
    assert render_policy.main(["--check", str(drifted)]) == 1
    assert render_policy.main([str(drifted)]) == 0  # rewrites it
    assert drifted.read_text() == MAIN.read_text()


def test_no_role_of_the_stack_is_one_podplane_manages() -> None:
    """OwnRoles lets podplane attach policies to role/podplane-*: neither the control plane's
    role nor the host's may match, whatever the stack's name (a generated role name starts
    with it), so both are named from a parameter that refuses the prefix."""
    t = load()
    param = t["Parameters"]["ControlPlaneRoleName"]
    pattern = re.compile(param["AllowedPattern"])
    assert pattern.match(param["Default"]) and pattern.match("a" * 59)
    assert not pattern.match("podplane-control-plane") and not pattern.match("a" * 60)
    assert not pattern.match("SageMakerHyperPodInference-podplane-x")
    own = [s["Resource"] for s in POLICY["Statement"] if s["Sid"] == "OwnRoles"]
    assert own == [["arn:aws:iam::*:role/podplane-*",
                    "arn:aws:iam::*:role/SageMakerHyperPodInference-podplane-*"]]
    names = {name: res["Properties"].get("RoleName")
             for name, res in t["Resources"].items() if res["Type"] == "AWS::IAM::Role"}
    assert names == {"ControlPlaneRole": {"Ref": "ControlPlaneRoleName"},
                     "InstanceRole": {"Fn::Sub": "${ControlPlaneRoleName}-host"}}
    assert all("Path" not in res["Properties"] for res in t["Resources"].values()
               if res["Type"] == "AWS::IAM::Role")  # role/podplane-*/x would match too


def test_outputs_give_the_port_forwarding_command() -> None:
    t = load()
    command = t["Outputs"]["SsmPortForwardCommand"]["Value"]["Fn::Sub"]
    assert command.startswith("aws ssm start-session --region ${AWS::Region} "
                              "--target ${InstanceA} ")
    assert "--document-name AWS-StartPortForwardingSession" in command
    assert """'{"portNumber":["3099"],"localPortNumber":["3099"]}'""" in command
    assert t["Outputs"]["SsmPortForwardCommandB"]["Condition"] == "UsePostgres"


def test_parameters_choose_network_size_and_database() -> None:
    t = load()
    params = t["Parameters"]
    assert params["VpcMode"]["AllowedValues"] == ["new", "existing"]
    assert params["DatabaseMode"]["AllowedValues"] == ["sqlite", "postgres"]
    assert "InstanceType" in params
    resources = t["Resources"]
    assert resources["Vpc"]["Condition"] == "NewVpc"
    for name in ("Database", "InstanceB", "DatabaseSecurityGroup"):
        assert resources[name]["Condition"] == "UsePostgres"
    assert resources["DataVolume"]["Condition"] == "UseSqlite"
    assert "Condition" not in resources["InstanceA"]


def test_the_database_is_private_encrypted_and_kept_on_delete() -> None:
    db = load()["Resources"]["Database"]
    props = db["Properties"]
    assert (props["StorageEncrypted"], props["PubliclyAccessible"]) == (True, False)
    assert props["ManageMasterUserPassword"] is True and "MasterUserPassword" not in props
    assert db["DeletionPolicy"] == "Snapshot"
    ingress = load()["Resources"]["DatabaseSecurityGroup"]["Properties"]["SecurityGroupIngress"]
    assert ingress == [{"Description": "PostgreSQL from the control plane", "IpProtocol": "tcp",
                        "FromPort": 5432, "ToPort": 5432,
                        "SourceSecurityGroupId": {"Ref": "InstanceSecurityGroup"}}]


def test_the_container_gets_the_control_plane_role_and_not_the_hosts() -> None:
    """IMDSv2 with a hop limit of 1: a container (one hop further) cannot reach the instance
    role; the host hands it ControlPlaneRole's credentials through credential_process."""
    data = load()["Resources"]["LaunchTemplate"]["Properties"]["LaunchTemplateData"]
    assert data["MetadataOptions"] == {"HttpEndpoint": "enabled", "HttpTokens": "required",
                                       "HttpPutResponseHopLimit": 1}
    script = data["UserData"]["Fn::Base64"]["Fn::Sub"][0]
    assert "credential_process = cat /run/aws/credentials.json" in script
    assert "credential_source" not in script and "--network host" not in script
    assert "aws sts assume-role" in script
    assert "CONTROL_PLANE_ROLE=${ControlPlaneRole.Arn}" in script
    for flag in ("--read-only", "--cap-drop ALL", "-p 127.0.0.1:3099:3099",
                 "--log-driver awslogs", "-v /run/podplane-aws:/run/aws:ro"):
        assert flag in script


def _heredoc(script: str, path: str) -> str:
    """The body of `cat > PATH <<'EOF'` in the user data."""
    body = script.split(f"cat > {path} <<'EOF'\n", 1)[1]
    return body.split("\nEOF\n", 1)[0] + "\n"


def test_the_sdk_reads_the_credentials_the_host_writes(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """botocore runs the profile's credential_process and takes the JSON the host script makes
    from `aws sts assume-role --query Credentials` plus Version 1."""
    script = load()["Resources"]["LaunchTemplate"]["Properties"]["LaunchTemplateData"][
        "UserData"]["Fn::Base64"]["Fn::Sub"][0]
    creds = tmp_path / "credentials.json"
    config = tmp_path / "aws-config"
    config.write_text(_heredoc(script, "/etc/podplane/aws-config")
                      .replace("/run/aws/credentials.json", str(creds))
                      .replace("${AWS::Region}", "us-west-2"))
    assumed = {"AccessKeyId": "ASIAEXAMPLE", "SecretAccessKey": "s", "SessionToken": "t",
               "Expiration": "2999-01-01T00:00:00+00:00"}
    creds.write_text(json.dumps({"Version": 1, **assumed}))
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    session = boto3.session.Session(profile_name="podplane")
    got = session.get_credentials()
    assert (got.method, got.access_key, got.token) == ("custom-process", "ASIAEXAMPLE", "t")
    assert session.region_name == "us-west-2"


def test_the_user_data_and_the_scripts_it_writes_are_valid_bash(tmp_path: Path) -> None:
    """After CloudFormation's Fn::Sub (every ${...} is one of its variables), bash parses the
    user data and each script it installs; a planted syntax error is caught the same way."""
    sub = load()["Resources"]["LaunchTemplate"]["Properties"]["LaunchTemplateData"][
        "UserData"]["Fn::Base64"]["Fn::Sub"]
    template, variables = sub
    names = set(re.findall(r"\$\{([^}]+)\}", template))
    parameters_and_resources = set(load()["Parameters"]) | set(load()["Resources"])
    unknown = {n for n in names - set(variables) if not n.startswith("AWS::")
               and n.split(".")[0] not in parameters_and_resources}
    assert unknown == set()  # a shell ${VAR} here would be taken by Fn::Sub
    script = re.sub(r"\$\{[^}]+\}", "value", template)
    installed = re.findall(r"cat > (/usr/local/bin/\S+) <<", script)
    scripts = {"user-data": script} | {path: _heredoc(script, path) for path in installed}
    assert len(scripts) == 4
    for name, body in [*scripts.items(), ("planted", "if true; then\n")]:
        run = subprocess.run(["bash", "-n"], input=body, capture_output=True, text=True)
        assert (run.returncode == 0) == (name != "planted"), (name, run.stderr)
