"""The HyperPod inference operator as a feature, read back as IAM, EKS and Kubernetes show it:
enable -> the cluster's OIDC provider, an execution role trusting it for the operator's service
account with a policy on one cluster and one bucket's prefixes, the add-on ACTIVE and tagged;
the same request again changes nothing; the operator serves InferenceEndpointConfig (model
server Deployment, Service, ALB hostname, status); a narrowed policy or a removed add-on is
drift that one request repairs; disable removes exactly what it made."""

from __future__ import annotations

import json
from typing import Any

from podplane.domain.catalog import lookup
from podplane.domain.features.inference_operator import ADDON, FSX_CSI_ADDON, S3_CSI_ADDON
from podplane.domain.inference import managed
from podplane.services.cloud_access import cloud_of
from tests.features.conftest import (
    BASE,
    BUCKET,
    addon_of,
    mutations,
    same_again_changes_nothing,
)
from tests.groups.conftest import CLUSTER, FIRST_TYPE, Cluster, finish

URL = f"{BASE}/inference-operator"
IEC_API = managed.API_VERSION


def _prerequisites(cluster: Cluster, *names: str) -> None:
    """Add-ons someone installed before (cert-manager and the CSI drivers), ACTIVE."""
    for name in names:
        cluster.stack.aws("eks").create_addon(clusterName=CLUSTER, addonName=name)
    cluster.stack.advance(130)


def _roles(cluster: Cluster) -> list[dict[str, Any]]:
    iam = cluster.stack.aws("iam")
    return [r for r in iam.list_roles()["Roles"]
            if {"Key": "podplane:feature", "Value": "inference-operator"}
            in iam.list_role_tags(RoleName=r["RoleName"])["Tags"]]


def _providers(cluster: Cluster) -> list[str]:
    iam = cluster.stack.aws("iam")
    return [p["Arn"] for p in iam.list_open_id_connect_providers()["OpenIDConnectProviderList"]]


def _config(name: str, lb: bool = False) -> dict[str, Any]:
    """The managed endpoint's manifest as podplane renders it (domain/inference/managed.py)."""
    instance_type = lookup(FIRST_TYPE)
    assert instance_type is not None
    return managed.render(name, f"s3://{BUCKET}/models/{name}/", BUCKET, "us-west-2",
                          instance_type, load_balancer=lb)


async def _enable(cluster: Cluster) -> dict[str, Any]:
    async with cluster.stack.client("operator") as client:
        on = await client.patch(URL, json={"enabled": True})
        assert on.status_code == 202, on.text
        assert [a["kind"] for a in on.json()["plan"]["actions"]] == [
            "oidc-provider", "iam-role", "eks-addon"]
        done = await finish(client, on.json())
        assert done["status"] == "succeeded", done
        return dict(on.json())


async def test_enable_serve_drift_disable(cluster: Cluster) -> None:
    stack = cluster.stack
    _prerequisites(cluster, "cert-manager", S3_CSI_ADDON, FSX_CSI_ADDON)
    before = set(_providers(cluster))
    await _enable(cluster)

    (role,) = _roles(cluster)
    assert role["RoleName"].startswith("SageMakerHyperPodInference-")
    issuer = stack.aws("eks").describe_cluster(name=CLUSTER)["cluster"]["identity"]["oidc"][
        "issuer"].removeprefix("https://")
    (provider,) = set(_providers(cluster)) - before
    assert provider.endswith(f":oidc-provider/{issuer}")
    trust = role["AssumeRolePolicyDocument"]
    trust = json.loads(trust) if isinstance(trust, str) else trust
    web = trust["Statement"][0]
    assert (web["Principal"], web["Action"]) == ({"Federated": provider},
                                                 "sts:AssumeRoleWithWebIdentity")
    assert web["Condition"]["StringEquals"][f"{issuer}:sub"] == (
        "system:serviceaccount:hyperpod-inference-system:hyperpod-inference-controller-manager")
    iam = stack.aws("iam")
    (policy_name,) = iam.list_role_policies(RoleName=role["RoleName"])["PolicyNames"]
    doc = iam.get_role_policy(RoleName=role["RoleName"], PolicyName=policy_name)["PolicyDocument"]
    for stmt in doc["Statement"]:
        actions = stmt["Action"] if isinstance(stmt["Action"], list) else [stmt["Action"]]
        assert not any(a == "*" or a.endswith(":*") for a in actions), stmt
        assert stmt["Resource"] != "*" and "podplane-gpu-bucket" in stmt["Resource"] or \
            stmt["Resource"].startswith("arn:aws:sagemaker:"), stmt
    addon = addon_of(cluster, ADDON)
    assert addon is not None and addon["status"] == "ACTIVE", addon
    assert addon["tags"] == {"podplane:feature": "inference-operator"}
    assert json.loads(addon["configurationValues"])["executionRoleArn"] == role["Arn"]

    async with stack.client("operator") as client:
        view = (await client.get(URL)).json()
        assert (view["observed_enabled"], view["drifted"]) == (True, False)
        await same_again_changes_nothing(client, cluster, URL, {"enabled": True})

    await _serves_an_endpoint(cluster)
    await _narrowed_policy_is_repaired(cluster, role["RoleName"], policy_name, doc)
    await _removed_addon_is_repaired(cluster)

    count = len(stack.ledger())
    async with stack.client("operator") as client:
        off = await client.patch(URL, json={"enabled": False})
        assert off.status_code == 202, off.text
        assert (await finish(client, off.json()))["status"] == "succeeded"
    assert sorted(mutations(stack.ledger()[count:])) == sorted([
        "eks:DeleteAddon", "iam:DeleteRolePolicy", "iam:DeleteRole",
        "iam:DeleteOpenIDConnectProvider"])
    assert addon_of(cluster, ADDON) is None and _roles(cluster) == []
    assert set(_providers(cluster)) == before
    for theirs in ("cert-manager", S3_CSI_ADDON, FSX_CSI_ADDON):
        assert addon_of(cluster, theirs) is not None, theirs


async def _serves_an_endpoint(cluster: Cluster) -> None:
    """The operator's work, read with the Kubernetes API: model server, Service, ALB, status;
    the fake engine answers through the Service."""
    stack = cluster.stack
    kube = await cloud_of(stack.app.state.podplane).kube_for(CLUSTER)
    await kube.apply(_config("llama", lb=True), force=True)
    for _ in range(12):
        stack.advance(30)
        found = await kube.get(IEC_API, "InferenceEndpointConfig", "llama", "default")
        if ((found or {}).get("status") or {}).get("state") == "DeploymentComplete":
            break
    assert found is not None
    status = found["status"]
    assert status["state"] == "DeploymentComplete", status
    assert status["deploymentStatus"]["deploymentObjectOverallState"] == "DeploymentComplete"
    assert (status["replicas"], status["selector"]) == (1, "app=llama")
    deployment = await kube.get("apps/v1", "Deployment", "llama", "default")
    assert deployment is not None
    pod = deployment["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {"node.kubernetes.io/instance-type": FIRST_TYPE}
    assert deployment["metadata"]["ownerReferences"][0]["kind"] == "InferenceEndpointConfig"
    ingress = await kube.get("networking.k8s.io/v1", "Ingress", "alb-llama", "default")
    assert ingress is not None
    assert ingress["status"]["loadBalancer"]["ingress"][0]["hostname"].endswith(
        ".elb.amazonaws.com")
    code, answer = await kube.proxy("POST", "default", "llama", 8000, "v1/completions",
                                    {"model": "llama", "prompt": "hello", "max_tokens": 4})
    assert code == 200 and answer["choices"], answer
    await kube.delete(IEC_API, "InferenceEndpointConfig", "llama", namespace="default")
    stack.advance(10)
    assert await kube.get("apps/v1", "Deployment", "llama", "default") is None


async def _narrowed_policy_is_repaired(cluster: Cluster, role: str, name: str,
                                       doc: dict[str, Any]) -> None:
    """Someone drops UpdateClusterInference: the operator fails as the troubleshooting page
    says (add-on DEGRADED), the feature shows drifted, one request repairs both."""
    stack = cluster.stack
    narrowed = {**doc, "Statement": [s for s in doc["Statement"] if s["Sid"] != "OperatorCluster"]}
    stack.aws("iam").put_role_policy(RoleName=role, PolicyName=name,
                                     PolicyDocument=json.dumps(narrowed))
    stack.advance(5)
    addon = addon_of(cluster, ADDON)
    assert addon is not None and addon["status"] == "DEGRADED"
    (issue,) = addon["health"]["issues"]
    assert issue["code"] == "AddonPermissionFailure"
    assert "not authorized to perform: sagemaker:UpdateClusterInference" in issue["message"]
    async with stack.client("operator") as client:
        view = (await client.get(URL)).json()
        assert view["drifted"] is True
        assert any("OperatorCluster" in d or "Statement" in d for d in view["drift"]), view
        fix = await client.patch(URL, json={"enabled": True})
        assert fix.status_code == 202, fix.text
        assert [a["key"] for a in fix.json()["plan"]["actions"]] == [f"iam role {role}"]
        assert (await finish(client, fix.json()))["status"] == "succeeded"
        assert (await client.get(URL)).json()["drifted"] is False
    assert stack.aws("iam").get_role_policy(RoleName=role, PolicyName=name)[
        "PolicyDocument"] == doc
    stack.advance(5)
    assert (addon_of(cluster, ADDON) or {}).get("status") == "ACTIVE"


async def _removed_addon_is_repaired(cluster: Cluster) -> None:
    stack = cluster.stack
    stack.aws("eks").delete_addon(clusterName=CLUSTER, addonName=ADDON)
    stack.advance(90)
    assert addon_of(cluster, ADDON) is None
    async with stack.client("operator") as client:
        view = (await client.get(URL)).json()
        assert view["drifted"] is True and any(ADDON in d for d in view["drift"])
        fix = await client.patch(URL, json={"enabled": True})
        assert fix.status_code == 202, fix.text
        assert [a["verb"] for a in fix.json()["plan"]["actions"]] == ["create"]
        assert (await finish(client, fix.json()))["status"] == "succeeded"
    assert (addon_of(cluster, ADDON) or {}).get("status") == "ACTIVE"


async def test_refusals_and_what_is_left_alone(cluster: Cluster) -> None:
    """No FSx CSI driver: 409 and nothing changes. A role and an add-on of podplane's names
    that someone else made are reported and never touched."""
    stack = cluster.stack
    _prerequisites(cluster, "cert-manager", S3_CSI_ADDON)
    count = len(stack.ledger())
    async with stack.client("operator") as client:
        refused = await client.patch(URL, json={"enabled": True})
        assert refused.status_code == 409, refused.text
        assert FSX_CSI_ADDON in refused.json()["detail"]
    assert len(stack.ledger()) == count

    _prerequisites(cluster, FSX_CSI_ADDON)
    stack.aws("eks").create_addon(clusterName=CLUSTER, addonName=ADDON, tags={"team": "ml"})
    async with stack.client("operator") as client:
        plan = (await client.post(f"{URL}/plan", json={"enabled": True})).json()["plan"]
        assert any(ADDON in a for a in plan["left_alone"]), plan
        assert f"eks addon {ADDON}" not in [a["key"] for a in plan["actions"]]
    theirs = addon_of(cluster, ADDON)
    assert theirs is not None and theirs["tags"] == {"team": "ml"}
