"""SageMaker managed MLflow as a feature, and jobs that log to it, read back as SageMaker, IAM,
EKS, Kubernetes and the tracking server's MLflow REST API show them.

One podplane-created cluster for the module (tests/jobs/conftest), on virtual time, in order:
a bad setting is refused and changes nothing; enable -> the tracking server Created with its
artifacts under the bucket's mlflow/<cluster>/ prefix, its role, the jobs' role limited to
that server, the association and ServiceAccount; the same request again makes no mutation; a
submitted job carries the tracking URI and runs as that identity, its rank 0 logs a run with
metrics, and the job view links to it; drift (the jobs' policy changed, the server deleted out
of band) -> drifted -> one request repairs it; disable -> exactly what it made is gone, and
jobs no longer get the env.
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
import pytest_asyncio
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from podplane.domain.errors import InvalidInput
from podplane.domain.features import mlflow as mlf
from podplane.domain.features import render
from podplane.domain.features.render import ClusterFacts
from podplane_sandbox.aws.mlflow import CREATE_SECONDS, DELETE_SECONDS
from tests.features.conftest import mutations, same_again_changes_nothing
from tests.groups.conftest import finish
from tests.jobs.conftest import CLUSTER, JOBS, job, settle, submit
from tests.jobs.conftest import cluster as made  # noqa: F401 - fixture reuse
from tests.stack import Stack

IN_ORDER = pytest.mark.asyncio(loop_scope="module")
URL = f"/api/v1/clusters/{CLUSTER}/features/mlflow"
SERVER = mlf.server_name(CLUSTER)
ON = {"enabled": True}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def alpha(made: tuple[Stack, str]) -> tuple[Stack, str]:  # noqa: F811
    """The podplane-made cluster (stack, its instance group)."""
    return made


def _server(stack: Stack) -> dict[str, Any] | None:
    try:
        return dict(stack.aws("sagemaker").describe_mlflow_tracking_server(
            TrackingServerName=SERVER))
    except ClientError as err:
        assert err.response["Error"]["Code"] == "ResourceNotFound"
        return None


def _roles(stack: Stack) -> set[str]:
    names = {r["RoleName"] for r in stack.aws("iam").list_roles()["Roles"]}
    return {n for n in names if "-mlflow" in n}


def _policy(stack: Stack, role: str) -> dict[str, Any]:
    doc = stack.aws("iam").get_role_policy(RoleName=role, PolicyName="podplane-checkpoints")
    found = doc["PolicyDocument"]
    return dict(json.loads(found) if isinstance(found, str) else found)


def _runs(stack: Stack, arn: str, experiment: str) -> list[dict[str, Any]]:
    """The tracking server's runs of an experiment, asked as the sagemaker-mlflow plugin asks
    (SigV4 for sagemaker-mlflow, the server's ARN in its header)."""
    base = f"{stack.aws_url}/api/2.0/mlflow"

    def send(method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        req = AWSRequest(method=method, url=base + path, data=data, headers={
            "x-mlflow-sm-tracking-server-arn": arn, "Content-Type": "application/json"})
        SigV4Auth(Credentials("t", "t"), "sagemaker-mlflow", "us-west-2").add_auth(req)
        return httpx.request(method, base + path, content=data,
                             headers=dict(req.headers.items())).json()

    exp = send("GET", f"/experiments/get-by-name?experiment_name={experiment}")
    if "experiment" not in exp:
        return []
    return list(send("POST", "/runs/search", {"experiment_ids": [
        exp["experiment"]["experiment_id"]]}).get("runs") or [])


async def _set(api: httpx.AsyncClient, body: dict[str, Any]) -> None:
    r = await api.patch(URL, json=body)
    assert r.status_code == 202, r.text
    done = await finish(api, r.json())
    assert done["status"] == "succeeded", done


async def _run_to_end(stack: Stack, api: httpx.AsyncClient, name: str, group: str
                      ) -> dict[str, Any]:
    await submit(api, name=name, recipe="pytorch-ddp", instance_group=group, replicas=1)
    view: dict[str, Any] = {}
    for _ in range(60):
        settle(stack, 10)
        view = await job(api, name)
        if view["status"] in ("Succeeded", "Failed"):
            break
    return view


def test_an_existing_server_by_arn_renders_no_server_to_make() -> None:
    """Pure: with `tracking_server` set, nothing of the server's is made; the jobs' grant
    names that server (and only it)."""
    arn = "arn:aws:sagemaker:us-west-2:123456789012:mlflow-tracking-server/team"
    facts = ClusterFacts("c1", "c1", "c1", "123456789012", "us-west-2", "b", "arn:hp")
    settings = mlf.check({"size": "Small", "tracking_server": arn})
    res = render.resources(mlf.NAME, True, settings, facts)
    assert [(r.kind, r.key) for r in res][:1] == [("mlflow-server",
                                                   "mlflow tracking server team")]
    assert "RoleArn" not in res[0].desired
    assert [r.desired["policy"]["Statement"][0]["Resource"] for r in res
            if r.kind == "iam-role"] == [arn]
    with pytest.raises(InvalidInput):
        mlf.check({"size": "Tiny", "tracking_server": ""})


@IN_ORDER
async def test_a_bad_setting_is_refused_and_changes_nothing(alpha: tuple[Stack, str]
                                                             ) -> None:
    stack, _ = alpha
    count = len(stack.ledger())
    async with stack.client("operator") as api:
        for settings, field in (({"size": "Huge"}, "size"),
                                ({"tracking_server": "no spaces!"}, "tracking_server"),
                                ({"tracking_server": "not-there"}, "tracking_server")):
            r = await api.patch(URL, json={"enabled": True, "settings": settings})
            assert r.status_code == 422, r.text
            assert r.json()["field"] == field
    assert len(stack.ledger()) == count and _server(stack) is None


@IN_ORDER
async def test_enable_makes_the_server_and_the_jobs_identity(alpha: tuple[Stack, str]
                                                              ) -> None:
    stack, _ = alpha
    before = len(stack.ledger())
    async with stack.client("operator") as api:
        plan = (await api.post(f"{URL}/plan", json=ON)).json()["plan"]
        assert [a["kind"] for a in plan["actions"]] == [
            "iam-role", "mlflow-server", "iam-role", "pod-identity", "kube"]
        await _set(api, ON)
        view = (await api.get(URL)).json()
    assert (view["desired_enabled"], view["observed_enabled"], view["drifted"]) == (
        True, True, False)
    server = _server(stack)
    assert server is not None
    assert (server["TrackingServerStatus"], server["TrackingServerSize"]) == ("Created", "Small")
    bucket = server["ArtifactStoreUri"].removeprefix("s3://").split("/")[0]
    assert server["ArtifactStoreUri"] == f"s3://{bucket}/mlflow/{CLUSTER}/"
    server_role, jobs_role = sorted(_roles(stack), key=len)
    assert server["RoleArn"].endswith(f"/{server_role}")
    trust = stack.aws("iam").get_role(RoleName=server_role)["Role"]["AssumeRolePolicyDocument"]
    assert trust["Statement"][0]["Principal"] == {"Service": "sagemaker.amazonaws.com"}
    resources = {str(s["Resource"]) for s in _policy(stack, server_role)["Statement"]}
    assert resources == {f"arn:aws:s3:::{bucket}/mlflow/{CLUSTER}/*", f"arn:aws:s3:::{bucket}"}
    (grant,) = _policy(stack, jobs_role)["Statement"]
    assert grant["Resource"] == server["TrackingServerArn"]
    assert all(a.startswith("sagemaker-mlflow:") and "*" not in a for a in grant["Action"])
    assert sorted(mutations(stack.ledger()[before:])) == sorted([
        "iam:CreateRole", "iam:PutRolePolicy", "sagemaker:CreateMlflowTrackingServer",
        "iam:CreateRole", "iam:PutRolePolicy", "eks:CreatePodIdentityAssociation"])


@IN_ORDER
async def test_the_same_request_again_changes_nothing(alpha: tuple[Stack, str]
                                                       ) -> None:
    stack, _ = alpha
    async with stack.client("operator") as api:
        await same_again_changes_nothing(api, SimpleNamespace(stack=stack),  # type: ignore[arg-type]
                                         URL, ON)


@IN_ORDER
async def test_a_job_logs_its_run_and_the_view_links_it(alpha: tuple[Stack, str]
                                                         ) -> None:
    stack, group = alpha
    server = _server(stack)
    assert server is not None
    arn = server["TrackingServerArn"]
    async with stack.client("operator") as api:
        r = await api.post(JOBS, params={"dry_run": "true"}, json={
            "name": "tracked", "recipe": "pytorch-ddp", "instance_group": group,
            "replicas": 1})
        spec = r.json()["plan"]["manifest"]["spec"]["replicaSpecs"][0]["template"]["spec"]
        env = {e["name"]: e["value"] for e in spec["containers"][0]["env"]}
        assert (env["MLFLOW_TRACKING_URI"], env["MLFLOW_EXPERIMENT_NAME"]) == (arn, "tracked")
        assert spec["serviceAccountName"] == mlf.SERVICE_ACCOUNT
        view = await _run_to_end(stack, api, "tracked", group)
    assert view["status"] == "Succeeded", view
    (run,) = _runs(stack, arn, "tracked")
    assert run["info"]["status"] == "FINISHED"
    metrics = {m["key"]: m["value"] for m in run["data"]["metrics"]}
    assert {"train_loss", "train_runtime"} <= set(metrics)
    linked = view["mlflow"]
    assert (linked["run_id"], linked["experiment"], linked["status"]) == (
        run["info"]["run_id"], "tracked", "FINISHED")
    assert linked["metrics"] == metrics
    assert linked["url"] == (f"{server['TrackingServerUrl']}/#/experiments/"
                             f"{run['info']['experiment_id']}/runs/{run['info']['run_id']}")


@IN_ORDER
async def test_drift_is_shown_and_one_request_repairs_it(alpha: tuple[Stack, str]
                                                          ) -> None:
    stack, _ = alpha
    jobs_role = max(_roles(stack), key=len)
    stack.aws("iam").put_role_policy(
        RoleName=jobs_role, PolicyName="podplane-checkpoints", PolicyDocument=json.dumps({
            "Version": "2012-10-17", "Statement": [{"Effect": "Allow",
                                                    "Action": "sagemaker-mlflow:*",
                                                    "Resource": "*"}]}))
    stack.aws("sagemaker").delete_mlflow_tracking_server(TrackingServerName=SERVER)
    stack.advance(DELETE_SECONDS + 1)
    async with stack.client("operator") as api:
        view = (await api.get(URL)).json()
        assert view["drifted"] is True
        assert any("is missing" in d or "mlflow tracking server" in d for d in view["drift"])
        assert any(jobs_role in d for d in view["drift"]), view["drift"]
        before = len(stack.ledger())
        await _set(api, ON)
        assert (await api.get(URL)).json()["drifted"] is False
    assert sorted(mutations(stack.ledger()[before:])) == sorted([
        "sagemaker:CreateMlflowTrackingServer", "iam:PutRolePolicy"])
    server = _server(stack)
    assert server is not None and server["TrackingServerStatus"] == "Created"
    assert CREATE_SECONDS > 0


@IN_ORDER
async def test_disable_removes_what_it_made_and_jobs_lose_the_env(alpha: tuple[Stack, str]
                                                                   ) -> None:
    stack, group = alpha
    before = len(stack.ledger())
    async with stack.client("operator") as operator:   # the tracking server goes: a destroy
        assert (await operator.patch(URL, json={"enabled": False})).status_code == 403
    assert len(stack.ledger()) == before
    async with stack.client("admin") as api:
        await _set(api, {"enabled": False, "confirm": True})
        view = (await api.get(URL)).json()
        r = await api.post(JOBS, params={"dry_run": "true"}, json={
            "name": "untracked", "recipe": "pytorch-ddp", "instance_group": group,
            "replicas": 1})
    assert (view["desired_enabled"], view["observed_enabled"], view["drifted"]) == (
        False, False, False)
    assert _server(stack) is None and _roles(stack) == set()
    kube = stack.sandbox.kube.get(CLUSTER).store
    assert kube.find("serviceaccounts", "default", mlf.SERVICE_ACCOUNT) is None
    spec = r.json()["plan"]["manifest"]["spec"]["replicaSpecs"][0]["template"]["spec"]
    assert "serviceAccountName" not in spec
    assert not any(e["name"].startswith("MLFLOW_") for e in spec["containers"][0]["env"])
    done = mutations(stack.ledger()[before:])
    assert done.count("sagemaker:DeleteMlflowTrackingServer") == 1
    assert done.count("iam:DeleteRole") == 2
    assert done.count("eks:DeletePodIdentityAssociation") == 1


@IN_ORDER
async def test_an_existing_server_is_used_and_never_deleted(alpha: tuple[Stack, str]
                                                            ) -> None:
    stack, group = alpha
    sm = stack.aws("sagemaker")
    server = _server(stack)
    assert server is None
    trust = {"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Action": "sts:AssumeRole",
        "Principal": {"Service": "sagemaker.amazonaws.com"}}]}
    role = stack.aws("iam").create_role(RoleName="team-tracking",
                                        AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]
    stack.advance(60)
    bucket = stack.aws("s3").list_buckets()["Buckets"][0]["Name"]
    arn = sm.create_mlflow_tracking_server(TrackingServerName="team", RoleArn=role,
                                           ArtifactStoreUri=f"s3://{bucket}/team/"
                                           )["TrackingServerArn"]
    stack.advance(CREATE_SECONDS + 1)
    before = len(stack.ledger())
    async with stack.client("operator") as api:
        await _set(api, {"enabled": True, "settings": {"tracking_server": arn}})
        r = await api.post(JOBS, params={"dry_run": "true"}, json={
            "name": "on-team", "recipe": "pytorch-ddp", "instance_group": group, "replicas": 1})
        env = {e["name"]: e["value"] for e in r.json()["plan"]["manifest"]["spec"][
            "replicaSpecs"][0]["template"]["spec"]["containers"][0]["env"]}
        assert env["MLFLOW_TRACKING_URI"] == arn
        (jobs_role,) = _roles(stack)
        assert _policy(stack, jobs_role)["Statement"][0]["Resource"] == arn
        await _set(api, {"enabled": False})
    done = mutations(stack.ledger()[before:])
    assert not any("MlflowTrackingServer" in m for m in done), done
    assert sm.describe_mlflow_tracking_server(TrackingServerName="team")[
        "TrackingServerStatus"] == "Created"
    assert _roles(stack) == set()
