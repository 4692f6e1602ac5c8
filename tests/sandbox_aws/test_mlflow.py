"""SageMaker MLflow tracking servers in the sandbox, as the SageMaker API and botocore's model
state them (sandbox/.../aws/mlflow.py), and the tracking server's MLflow REST API
(aws/mlflow_tracking.py) reached the way the sagemaker-mlflow plugin reaches it: SigV4 for
`sagemaker-mlflow` and the server's ARN in `x-mlflow-sm-tracking-server-arn`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from podplane_sandbox.aws.mlflow import CREATE_SECONDS, DELETE_SECONDS
from tests.sandbox_aws.conftest import Box, start_box

BUCKET = "podplane-mlflow-art"
TRUST = {"Version": "2012-10-17", "Statement": [{
    "Effect": "Allow", "Principal": {"Service": "sagemaker.amazonaws.com"},
    "Action": "sts:AssumeRole"}]}


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Box]:
    b = start_box(tmp_path_factory.mktemp("mlflow"))
    b.client("s3").create_bucket(Bucket=BUCKET, CreateBucketConfiguration={
        "LocationConstraint": "us-west-2"})
    b.client("iam").create_role(RoleName="podplane-mlflow-srv",
                                AssumeRolePolicyDocument=json.dumps(TRUST))
    b.advance(60)   # IAM propagation (lag mode)
    yield b
    b.sandbox.stop()
    assert b.shapes.errors == [], b.shapes.errors


def _role(box: Box, name: str = "podplane-mlflow-srv") -> str:
    return str(box.client("iam").get_role(RoleName=name)["Role"]["Arn"])


def _code(call: Any, **params: Any) -> str:
    with pytest.raises(ClientError) as err:
        call(**params)
    return str(err.value.response["Error"]["Code"])


def _rest(box: Box, arn: str, method: str, op: str, body: dict[str, Any] | None = None,
          query: str = "", service: str = "sagemaker-mlflow") -> httpx.Response:
    url = f"{box.url}/api/2.0/mlflow/{op}" + (f"?{query}" if query else "")
    data = json.dumps(body).encode() if body is not None else None
    req = AWSRequest(method=method, url=url, data=data, headers={
        "x-mlflow-sm-tracking-server-arn": arn, "Content-Type": "application/json"})
    SigV4Auth(Credentials("test", "test"), service, "us-west-2").add_auth(req)
    return httpx.request(method, url, content=data, headers=dict(req.headers.items()))


def test_refusals_change_nothing(box: Box) -> None:
    sm = box.client("sagemaker")
    before = len(box.ledger())
    good = {"TrackingServerName": "srv", "ArtifactStoreUri": f"s3://{BUCKET}/mlflow/",
            "RoleArn": _role(box)}
    assert _code(sm.create_mlflow_tracking_server, **{
        **good, "RoleArn": "arn:aws:iam::123456789012:role/missing"}) == "ValidationException"
    assert _code(sm.create_mlflow_tracking_server, **{
        **good, "ArtifactStoreUri": "s3://no-such-bucket/x/"}) == "ValidationException"
    assert _code(sm.create_mlflow_tracking_server, **{
        **good, "TrackingServerSize": "Huge"}) == "ValidationException"   # model enum
    assert _code(sm.describe_mlflow_tracking_server,
                 TrackingServerName="srv") == "ResourceNotFound"
    assert len(box.ledger()) == before
    assert sm.list_mlflow_tracking_servers()["TrackingServerSummaries"] == []


def test_a_server_is_creating_then_created_and_serves_runs(box: Box) -> None:
    sm = box.client("sagemaker")
    arn = sm.create_mlflow_tracking_server(
        TrackingServerName="srv", ArtifactStoreUri=f"s3://{BUCKET}/mlflow/",
        RoleArn=_role(box))["TrackingServerArn"]
    assert arn == "arn:aws:sagemaker:us-west-2:123456789012:mlflow-tracking-server/srv"
    found = sm.describe_mlflow_tracking_server(TrackingServerName="srv")
    assert (found["TrackingServerStatus"], found["TrackingServerSize"]) == ("Creating", "Small")
    assert _code(sm.create_mlflow_tracking_server, TrackingServerName="srv",
                 ArtifactStoreUri=f"s3://{BUCKET}/m/", RoleArn=_role(box)) == "ResourceInUse"
    assert _code(sm.update_mlflow_tracking_server, TrackingServerName="srv",
                 TrackingServerSize="Medium") == "ConflictException"
    assert _rest(box, arn, "GET", "experiments/get-by-name",
                 query="experiment_name=x").status_code == 503   # not serving yet
    box.advance(CREATE_SECONDS + 1)
    found = sm.describe_mlflow_tracking_server(TrackingServerName="srv")
    assert (found["TrackingServerStatus"], found["IsActive"]) == ("Created", "Active")
    assert found["TrackingServerUrl"].endswith(".us-west-2.experiments.sagemaker.aws")
    url = sm.create_presigned_mlflow_tracking_server_url(TrackingServerName="srv",
                                                         ExpiresInSeconds=60)["AuthorizedUrl"]
    assert url.startswith(found["TrackingServerUrl"] + "/auth?authToken=")

    missing = _rest(box, arn, "GET", "experiments/get-by-name", query="experiment_name=exp")
    assert (missing.status_code, missing.json()["error_code"]) == (
        404, "RESOURCE_DOES_NOT_EXIST")
    assert _rest(box, arn, "GET", "experiments/get-by-name", query="experiment_name=exp",
                 service="sagemaker").status_code == 403   # signed for another service
    exp = _rest(box, arn, "POST", "experiments/create", {"name": "exp"}).json()["experiment_id"]
    assert _rest(box, arn, "POST", "experiments/create", {"name": "exp"}).json()[
        "error_code"] == "RESOURCE_ALREADY_EXISTS"
    run = _rest(box, arn, "POST", "runs/create", {"experiment_id": exp, "start_time": 1000}
                ).json()["run"]["info"]["run_id"]
    for step, loss in ((0, 2.0), (10, 1.5)):
        assert _rest(box, arn, "POST", "runs/log-metric", {
            "run_id": run, "key": "loss", "value": loss, "timestamp": 1, "step": step}
        ).status_code == 200
    assert _rest(box, arn, "POST", "runs/log-batch", {
        "run_id": run, "params": [{"key": "lr", "value": "0.1"}]}).status_code == 200
    changed = _rest(box, arn, "POST", "runs/log-parameter",
                    {"run_id": run, "key": "lr", "value": "0.2"})
    assert changed.json()["error_code"] == "INVALID_PARAMETER_VALUE"
    _rest(box, arn, "POST", "runs/update", {"run_id": run, "status": "FINISHED",
                                            "end_time": 2000})
    (found_run,) = _rest(box, arn, "POST", "runs/search", {"experiment_ids": [exp]}
                         ).json()["runs"]
    assert found_run["info"]["status"] == "FINISHED"
    assert found_run["data"]["metrics"][0]["value"] == 1.5   # the latest value
    assert found_run["data"]["params"] == [{"key": "lr", "value": "0.1"}]
    assert [e["action"] for e in box.ledger(service="sagemaker")] == [
        "CreateMlflowTrackingServer"]


def test_update_then_delete(box: Box) -> None:
    sm = box.client("sagemaker")
    sm.update_mlflow_tracking_server(TrackingServerName="srv", TrackingServerSize="Medium")
    assert sm.describe_mlflow_tracking_server(TrackingServerName="srv")[
        "TrackingServerStatus"] == "Updating"
    box.advance(CREATE_SECONDS)
    found = sm.describe_mlflow_tracking_server(TrackingServerName="srv")
    assert (found["TrackingServerStatus"], found["TrackingServerSize"]) == ("Updated", "Medium")
    sm.delete_mlflow_tracking_server(TrackingServerName="srv")
    assert sm.describe_mlflow_tracking_server(TrackingServerName="srv")[
        "TrackingServerStatus"] == "Deleting"
    box.advance(DELETE_SECONDS + 1)
    assert _code(sm.describe_mlflow_tracking_server,
                 TrackingServerName="srv") == "ResourceNotFound"
    assert [e["action"] for e in box.ledger(service="sagemaker")][-2:] == [
        "UpdateMlflowTrackingServer", "DeleteMlflowTrackingServer"]
