"""Container Insights as a feature, read back with boto3 as IAM and EKS show it: enable -> a
role trusting EKS Pod Identity with CloudWatchAgentServerPolicy attached, the agent's
association naming that role, the CloudWatch Observability add-on ACTIVE and tagged; the same
request again changes nothing; disable -> all three gone. An association for the agent that
names someone else's role is left alone, and reported."""

from __future__ import annotations

import json
from typing import Any

from podplane.domain.features.catalog import (
    CLOUDWATCH_AGENT_POLICY,
    OBSERVABILITY_ADDON,
)
from podplane_sandbox.aws.iam_rules import LAG_SECONDS
from tests.features.conftest import BASE, addon_of, same_again_changes_nothing
from tests.groups.conftest import CLUSTER, Cluster, finish
from tests.sandbox_aws.iam_setup import make_role

URL = f"{BASE}/observability"


def _agent_associations(cluster: Cluster) -> list[dict[str, Any]]:
    eks = cluster.stack.aws("eks")
    found = eks.list_pod_identity_associations(
        clusterName=CLUSTER, namespace="amazon-cloudwatch", serviceAccount="cloudwatch-agent")
    return [eks.describe_pod_identity_association(
        clusterName=CLUSTER, associationId=a["associationId"])["association"]
        for a in found["associations"]]


def _podplane_roles(cluster: Cluster) -> list[dict[str, Any]]:
    iam = cluster.stack.aws("iam")
    return [r for r in iam.list_roles()["Roles"]
            if any(t["Key"] == "podplane:feature" and t["Value"] == "observability"
                   for t in iam.list_role_tags(RoleName=r["RoleName"])["Tags"])]


async def test_enable_noop_disable(cluster: Cluster) -> None:
    stack = cluster.stack
    async with stack.client("operator") as client:
        on = await client.patch(URL, json={"enabled": True})
        assert on.status_code == 202, on.text
        assert (await finish(client, on.json()))["status"] == "succeeded"

        (role,) = _podplane_roles(cluster)
        trust = role["AssumeRolePolicyDocument"]
        trust = json.loads(trust) if isinstance(trust, str) else trust
        assert trust["Statement"][0]["Principal"] == {"Service": "pods.eks.amazonaws.com"}
        attached = stack.aws("iam").list_attached_role_policies(RoleName=role["RoleName"])
        assert [p["PolicyArn"] for p in attached["AttachedPolicies"]] == [CLOUDWATCH_AGENT_POLICY]
        (association,) = _agent_associations(cluster)
        assert association["roleArn"] == role["Arn"]
        addon = addon_of(cluster, OBSERVABILITY_ADDON)
        assert addon is not None and addon["status"] == "ACTIVE"
        assert addon["tags"] == {"podplane:feature": "observability"}
        view = (await client.get(URL)).json()
        assert (view["observed_enabled"], view["drifted"]) == (True, False)

        await same_again_changes_nothing(client, cluster, URL, {"enabled": True})

        off = await client.patch(URL, json={"enabled": False})
        assert off.status_code == 202, off.text
        assert [a["verb"] for a in off.json()["plan"]["actions"]] == ["delete"] * 3
        assert (await finish(client, off.json()))["status"] == "succeeded"
    assert addon_of(cluster, OBSERVABILITY_ADDON) is None
    assert _agent_associations(cluster) == []
    assert _podplane_roles(cluster) == []


async def test_an_association_naming_another_role_is_left_alone(cluster: Cluster) -> None:
    stack = cluster.stack
    theirs = make_role(stack.aws, "their-cloudwatch-agent", ("pods.eks.amazonaws.com",))
    stack.advance(LAG_SECONDS + 1)  # a new role is usable once IAM propagated it
    stack.aws("eks").create_pod_identity_association(
        clusterName=CLUSTER, namespace="amazon-cloudwatch", serviceAccount="cloudwatch-agent",
        roleArn=theirs)
    async with stack.client("operator") as client:
        plan = await client.post(f"{URL}/plan", json={"enabled": True})
        assert plan.status_code == 200, plan.text
        assert any("amazon-cloudwatch/cloudwatch-agent" in a
                   for a in plan.json()["plan"]["left_alone"])
        assert "pod identity amazon-cloudwatch/cloudwatch-agent" not in [
            a["key"] for a in plan.json()["plan"]["actions"]]
    (association,) = _agent_associations(cluster)
    assert association["roleArn"] == theirs
