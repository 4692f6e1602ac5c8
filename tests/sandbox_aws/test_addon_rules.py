"""EKS add-on rules (docs/sandbox.md, "EKS and add-ons"): Deployment-based add-ons need Ready
nodes, the HyperPod training operator needs cert-manager, a HyperPod cluster and its Pod Identity
association; add-on-owned associations. Asserted as boto3 shows them (status, health issues)."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.sandbox_aws.conftest import Box, ensure_eks, group, hyperpod_cluster, network

OPERATOR = "amazon-sagemaker-hyperpod-training-operator"
OPERATOR_SA = "hp-training-operator-controller-manager"
ROLE = "arn:aws:iam::123456789012:role/podplane-test"


def addon(box: Box, name: str) -> dict[str, Any]:
    return dict(box.client("eks").describe_addon(clusterName="eks1", addonName=name)["addon"])


def issue_codes(box: Box, name: str) -> list[str]:
    return [i["code"] for i in addon(box, name)["health"]["issues"]]


def eks1(box: Box) -> tuple[str, str]:
    """An ACTIVE EKS cluster `eks1` in a new VPC -> (subnet, security group) of that VPC."""
    subnet, sg = network(box)
    ensure_eks(box, subnet)
    return subnet, sg


def with_nodes(box: Box, net: tuple[str, str]) -> None:
    """A HyperPod cluster on eks1 whose one node is Running."""
    hyperpod_cluster(box, "hp1", [group("workers", "ml.g5.8xlarge", 1)], *net)
    box.advance(700)


def test_daemonset_addons_go_active_without_nodes_deployment_ones_stay_creating_then_degrade(
        box: Box) -> None:
    net = eks1(box)
    eks = box.client("eks")
    for name in ("vpc-cni", "kube-proxy", "eks-pod-identity-agent", "coredns", "cert-manager"):
        eks.create_addon(clusterName="eks1", addonName=name)
    box.advance(180)
    assert addon(box, "vpc-cni")["status"] == "ACTIVE"
    assert addon(box, "kube-proxy")["status"] == "ACTIVE"
    assert addon(box, "eks-pod-identity-agent")["status"] == "ACTIVE"
    assert addon(box, "coredns")["status"] == "CREATING"
    box.advance(20 * 60)
    degraded = addon(box, "coredns")
    assert degraded["status"] == "DEGRADED"
    assert issue_codes(box, "coredns") == ["InsufficientNumberOfReplicas"]
    assert addon(box, "cert-manager")["status"] == "DEGRADED"
    with_nodes(box, net)  # replicas find a node: EKS reports the add-on healthy again
    assert addon(box, "coredns")["status"] == "ACTIVE"
    assert addon(box, "coredns")["health"]["issues"] == []


def test_addon_created_after_nodes_goes_active_and_degrades_when_nodes_go(box: Box) -> None:
    net = eks1(box)
    with_nodes(box, net)
    eks = box.client("eks")
    eks.create_addon(clusterName="eks1", addonName="coredns")
    box.advance(180)
    assert addon(box, "coredns")["status"] == "ACTIVE"
    box.client("sagemaker").delete_cluster(ClusterName="hp1")
    box.advance(1200)
    assert addon(box, "coredns")["status"] == "DEGRADED"
    assert issue_codes(box, "coredns") == ["InsufficientNumberOfReplicas"]


def _operator_with(box: Box, *, assoc: bool = True) -> None:
    extra = {"podIdentityAssociations": [{"serviceAccount": OPERATOR_SA, "roleArn": ROLE}]} \
        if assoc else {}
    box.client("eks").create_addon(clusterName="eks1", addonName=OPERATOR, **extra)
    box.advance(180)


def test_training_operator_fails_without_cert_manager_active(box: Box) -> None:
    net = eks1(box)
    with_nodes(box, net)
    eks = box.client("eks")
    eks.create_addon(clusterName="eks1", addonName="cert-manager")
    _operator_with(box)  # created while cert-manager is still CREATING
    assert addon(box, "cert-manager")["status"] == "ACTIVE"
    assert addon(box, OPERATOR)["status"] == "CREATE_FAILED"
    assert issue_codes(box, OPERATOR) == ["K8sResourceNotFound"]


def test_training_operator_fails_without_a_hyperpod_cluster(box: Box) -> None:
    eks1(box)
    box.client("eks").create_addon(clusterName="eks1", addonName="cert-manager")
    box.advance(20 * 60 + 200)
    _operator_with(box)
    assert addon(box, OPERATOR)["status"] == "CREATE_FAILED"
    assert issue_codes(box, OPERATOR) == ["ConfigurationConflict"]


def test_training_operator_degraded_without_its_association_even_if_added_later(
        box: Box) -> None:
    net = eks1(box)
    with_nodes(box, net)
    eks = box.client("eks")
    eks.create_addon(clusterName="eks1", addonName="cert-manager")
    box.advance(180)
    _operator_with(box, assoc=False)
    assert addon(box, OPERATOR)["status"] == "DEGRADED"
    assert issue_codes(box, OPERATOR) == ["AddonPermissionFailure"]
    eks.create_pod_identity_association(clusterName="eks1", namespace="aws-hyperpod",
                                        serviceAccount=OPERATOR_SA, roleArn=ROLE)
    box.advance(60)  # pods admitted before the association keep running without credentials
    assert addon(box, OPERATOR)["status"] == "DEGRADED"


def test_training_operator_active_with_prerequisites_and_owns_its_association(box: Box) -> None:
    net = eks1(box)
    with_nodes(box, net)
    eks = box.client("eks")
    eks.create_addon(clusterName="eks1", addonName="cert-manager")
    box.advance(180)
    _operator_with(box)
    made = addon(box, OPERATOR)
    assert made["status"] == "ACTIVE" and made["health"]["issues"] == []
    listed = eks.list_pod_identity_associations(clusterName="eks1")["associations"]
    assert [(a["namespace"], a["serviceAccount"]) for a in listed] == [
        ("aws-hyperpod", OPERATOR_SA)]
    assoc = eks.describe_pod_identity_association(
        clusterName="eks1", associationId=listed[0]["associationId"])["association"]
    assert assoc["ownerArn"] == made["addonArn"]
    assert made["podIdentityAssociations"] == [assoc["associationArn"]]
    eks.delete_addon(clusterName="eks1", addonName=OPERATOR)
    box.advance(120)
    assert eks.list_pod_identity_associations(clusterName="eks1")["associations"] == []


def test_pod_identity_in_create_addon_only_for_its_service_account(box: Box) -> None:
    eks1(box)
    eks = box.client("eks")
    with pytest.raises(ClientError) as unsupported:
        eks.create_addon(clusterName="eks1", addonName="coredns", podIdentityAssociations=[
            {"serviceAccount": "coredns", "roleArn": ROLE}])
    assert unsupported.value.response["Error"]["Code"] == "InvalidParameterException"
    assert "Pod Identity feature is not supported" in str(unsupported.value)
    with pytest.raises(ClientError) as wrong:
        eks.create_addon(clusterName="eks1", addonName="aws-mountpoint-s3-csi-driver",
                         podIdentityAssociations=[{"serviceAccount": "default",
                                                   "roleArn": ROLE}])
    assert wrong.value.response["Error"]["Code"] == "InvalidParameterException"
    eks.create_pod_identity_association(clusterName="eks1", namespace="kube-system",
                                        serviceAccount="s3-csi-driver-sa", roleArn=ROLE)
    with pytest.raises(ClientError) as taken:
        eks.create_addon(clusterName="eks1", addonName="aws-mountpoint-s3-csi-driver",
                         podIdentityAssociations=[{"serviceAccount": "s3-csi-driver-sa",
                                                   "roleArn": ROLE}])
    assert taken.value.response["Error"]["Code"] == "ResourceInUseException"
    assert eks.list_addons(clusterName="eks1")["addons"] == []


def test_spaces_addon_is_offered_and_fails_without_cert_manager_active(box: Box) -> None:
    """amazon-sagemaker-spaces: listed like the other add-ons (hyp's templates need >= 0.1.6),
    and CREATE_FAILED while cert-manager is not ACTIVE (its webhook certificates)."""
    eks1(box)
    eks = box.client("eks")
    offered = eks.describe_addon_versions(addonName="amazon-sagemaker-spaces")["addons"]
    assert offered[0]["addonVersions"][0]["addonVersion"] == "v0.1.6-eksbuild.1"
    assert "amazon-sagemaker-spaces" in {
        a["addonName"] for a in eks.describe_addon_versions()["addons"]}
    eks.create_addon(clusterName="eks1", addonName="amazon-sagemaker-spaces")
    box.advance(180)
    assert addon(box, "amazon-sagemaker-spaces")["status"] == "CREATE_FAILED"
    assert issue_codes(box, "amazon-sagemaker-spaces") == ["K8sResourceNotFound"]
