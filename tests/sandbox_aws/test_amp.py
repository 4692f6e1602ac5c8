"""Amazon Managed Service for Prometheus in the sandbox, as the botocore `amp` model and AWS
describe it (sandbox/.../aws/amp.py): a workspace is CREATING, then ACTIVE with its endpoint
and ARN; a retry with the same clientToken returns the same workspace; shapes the model
refuses are ValidationException and change nothing; an unknown id is
ResourceNotFoundException; deleting a CREATING workspace is a ConflictException; a delete is
DELETING, then the workspace is gone (moto would make it ACTIVE at once and forget it at once).
Every answer is checked against botocore's output shapes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from podplane_sandbox.aws.amp import CREATE_SECONDS, DELETE_SECONDS
from podplane_sandbox.aws.amp_health import ADDON, COLLECTOR, observability_issue
from tests.sandbox_aws.conftest import Box, start_box


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Box]:
    b = start_box(tmp_path_factory.mktemp("amp"))
    yield b
    b.sandbox.stop()
    assert b.shapes.errors == [], b.shapes.errors   # every answer matched botocore's shapes


def _code(err: pytest.ExceptionInfo[ClientError]) -> str:
    return str(err.value.response["Error"]["Code"])


def test_a_workspace_is_creating_then_active_and_a_retry_returns_it(box: Box) -> None:
    amp = box.client("amp")
    made = amp.create_workspace(alias="metrics", tags={"team": "ml"}, clientToken="tok-1")
    assert made["status"] == {"statusCode": "CREATING"}
    again = amp.create_workspace(alias="metrics", tags={"team": "ml"}, clientToken="tok-1")
    assert again["workspaceId"] == made["workspaceId"]
    assert len(box.ledger(service="amp", action="CreateWorkspace")) == 1
    box.advance(CREATE_SECONDS + 1)
    ws = amp.describe_workspace(workspaceId=made["workspaceId"])["workspace"]
    assert ws["status"] == {"statusCode": "ACTIVE"} and ws["tags"] == {"team": "ml"}
    assert ws["arn"] == f"arn:aws:aps:us-west-2:123456789012:workspace/{made['workspaceId']}"
    assert ws["prometheusEndpoint"] == ("https://aps-workspaces.us-west-2.amazonaws.com/"
                                        f"workspaces/{made['workspaceId']}/")
    listed = amp.list_workspaces(alias="met")["workspaces"]
    assert [w["workspaceId"] for w in listed] == [made["workspaceId"]]
    assert amp.list_workspaces(alias="other")["workspaces"] == []


def test_refusals_change_nothing(box: Box) -> None:
    amp = box.client("amp")
    before = (len(amp.list_workspaces()["workspaces"]), len(box.ledger(service="amp")))
    with pytest.raises(ClientError) as err:
        amp.create_workspace(alias="a" * 101)
    assert _code(err) == "ValidationException"
    with pytest.raises(ClientError) as err:
        amp.describe_workspace(workspaceId="ws-00000000-0000-0000-0000-000000000000")
    assert _code(err) == "ResourceNotFoundException"
    with pytest.raises(ClientError) as err:
        amp.delete_workspace(workspaceId="ws-00000000-0000-0000-0000-000000000000")
    assert _code(err) == "ResourceNotFoundException"
    fresh = amp.create_workspace(alias="young")["workspaceId"]
    with pytest.raises(ClientError) as err:
        amp.delete_workspace(workspaceId=fresh)
    assert _code(err) == "ConflictException"
    after = (len(amp.list_workspaces()["workspaces"]), len(box.ledger(service="amp")))
    assert after == (before[0] + 1, before[1] + 1)   # only the one CreateWorkspace


def test_a_deleted_workspace_is_deleting_then_gone(box: Box) -> None:
    amp = box.client("amp")
    ws_id = amp.create_workspace(alias="short-lived")["workspaceId"]
    box.advance(CREATE_SECONDS + 1)
    amp.delete_workspace(workspaceId=ws_id)
    described = amp.describe_workspace(workspaceId=ws_id)["workspace"]
    assert described["status"] == {"statusCode": "DELETING"}
    amp.delete_workspace(workspaceId=ws_id)   # while DELETING: no second delete
    assert [e["target"] for e in box.ledger(service="amp", action="DeleteWorkspace")] == [ws_id]
    box.advance(DELETE_SECONDS + 1)
    with pytest.raises(ClientError) as err:
        amp.describe_workspace(workspaceId=ws_id)
    assert _code(err) == "ResourceNotFoundException"
    assert ws_id not in [w["workspaceId"] for w in amp.list_workspaces()["workspaces"]]


def test_the_observability_addon_health_follows_its_write_chain(box: Box) -> None:
    """The health issue EKS would show for amazon-sagemaker-hyperpod-observability
    (aws/amp_health.py), from what AMP, EKS Pod Identity and IAM hold right now."""
    amp, iam = box.client("amp"), box.client("iam")
    ws = amp.create_workspace(alias="health")
    other = amp.create_workspace(alias="other")
    trust = json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": {"Service": "pods.eks.amazonaws.com"},
        "Action": ["sts:AssumeRole", "sts:TagSession"]}]})
    role = iam.create_role(RoleName="collector", AssumeRolePolicyDocument=trust)["Role"]["Arn"]
    addon = {"addonName": ADDON, "clusterName": "c", "configurationValues": json.dumps(
        {"ampWorkspace": {"arn": ws["arn"], "prometheusEndpoint": "x"}})}
    eks: dict[str, Any] = {"pod_identity": {"c": {}}}

    def issue() -> tuple[str, str] | None:
        with box.sandbox.world.lock:
            found = observability_issue(box.sandbox.world, eks, addon)
        return (found["code"], found["message"]) if found else None

    def allow(resource: str) -> None:
        iam.put_role_policy(RoleName="collector", PolicyName="p", PolicyDocument=json.dumps({
            "Version": "2012-10-17", "Statement": [{
                "Effect": "Allow", "Action": "aps:RemoteWrite", "Resource": resource}]}))

    assert issue() is not None and issue()[0] == "AddonPermissionFailure"   # no association
    eks["pod_identity"]["c"]["a"] = {"namespace": COLLECTOR[0], "serviceAccount": COLLECTOR[1],
                                     "roleArn": role}
    assert "not authorized to perform: aps:RemoteWrite" in (issue() or ("", ""))[1]
    allow(other["arn"])   # remote write, but to another workspace
    assert (issue() or ("", ""))[0] == "AddonPermissionFailure"
    allow(ws["arn"])
    assert issue() is None
    eks["pod_identity"]["c"]["a"]["roleArn"] = role + "-gone"
    assert "does not exist" in (issue() or ("", ""))[1]
    eks["pod_identity"]["c"]["a"]["roleArn"] = role
    box.advance(CREATE_SECONDS + 1)
    amp.delete_workspace(workspaceId=ws["workspaceId"])
    assert (issue() or ("", ""))[0] == "ConfigurationConflict"
