"""`podplane deploy print-ssm-command` reads the stack's outputs through CloudFormation
DescribeStacks, here the sandbox's (moto serves CloudFormation)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from typer.testing import CliRunner

from podplane.cli import app
from tests.deploy.templates import load
from tests.stack import SandboxThread

REGION = "us-west-2"


@pytest.fixture(scope="module")
def cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxThread]:
    """One sandbox for the module (each test makes its own stack names)."""
    sandbox = SandboxThread(tmp_path_factory.mktemp("cloud"))
    with pytest.MonkeyPatch.context() as env:
        for key, value in {"AWS_ENDPOINT_URL": sandbox.box.aws_url,
                           "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"}.items():
            env.setenv(key, value)
        for key in ("AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION"):
            env.delenv(key, raising=False)
        try:
            yield sandbox
        finally:
            sandbox.stop()


def _client(service: str) -> Any:
    return boto3.client(service, region_name=REGION)


def _stack_like_ours(name: str) -> str:
    """A stack whose outputs are the real template's, on an instance the sandbox runs."""
    real = load()
    image = _client("ec2").describe_images(Owners=["amazon"])["Images"][0]["ImageId"]
    template = {"Resources": {"InstanceA": {"Type": "AWS::EC2::Instance", "Properties": {
                    "ImageId": image, "InstanceType": "t3.medium"}}},
                "Outputs": {k: real["Outputs"][k]
                            for k in ("SsmPortForwardCommand", "ConsoleUrl")}}
    _client("cloudformation").create_stack(StackName=name, TemplateBody=json.dumps(template))
    return str(_client("ec2").describe_instances()["Reservations"][0]["Instances"][0][
        "InstanceId"])


def _run(*args: str) -> Any:
    return CliRunner().invoke(app, ["deploy", "print-ssm-command", *args])


def test_it_prints_the_port_forwarding_command_of_the_stack(cloud: SandboxThread) -> None:
    instance = _stack_like_ours("podplane-prod")
    result = _run("--stack", "podplane-prod", "--region", REGION)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == (
        f"aws ssm start-session --region {REGION} --target {instance} "
        "--document-name AWS-StartPortForwardingSession "
        """--parameters '{"portNumber":["3099"],"localPortNumber":["3099"]}'""")
    assert "then open http://localhost:3099/" in result.stderr


def test_a_missing_stack_is_a_clear_error(cloud: SandboxThread) -> None:
    result = _run("--stack", "nope", "--region", REGION)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "no stack named nope in us-west-2" in result.stderr
    assert "Traceback" not in result.output


def test_a_stack_without_the_output_is_a_clear_error(cloud: SandboxThread) -> None:
    template = {"Resources": {"Topic": {"Type": "AWS::SNS::Topic"}}}
    _client("cloudformation").create_stack(StackName="other", TemplateBody=json.dumps(template))
    result = _run("--stack", "other", "--region", REGION)
    assert result.exit_code == 1
    assert "stack other has no SsmPortForwardCommand output" in result.stderr
    assert "deploy/cloudformation/podplane.yaml" in result.stderr


def test_without_a_region_it_says_how_to_give_one(monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    for key in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    result = _run("--stack", "podplane-prod")
    assert result.exit_code == 1
    assert "no AWS region is configured" in result.stderr
    assert "--region" in result.stderr
