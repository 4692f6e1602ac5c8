"""IAM as EKS and SageMaker HyperPod enforce it: roles exist, trust the service, can read the
lifecycle scripts, and become usable only after IAM propagates (lag mode). Each test asserts
what AWS answers (error code and message, cluster status and FailureMessage)."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

from podplane_sandbox.aws.iam_rules import LAG_SECONDS
from tests.sandbox_aws.conftest import ROLE, Box, ensure_eks, group, network
from tests.sandbox_aws.iam_setup import make_role, put_scripts, read_scripts, trust

SUBNETS = ["subnet-0123456789abcdef0"]
INSTANCE_POLICY = "arn:aws:iam::aws:policy/AmazonSageMakerClusterInstanceRolePolicy"
EKS_REFUSAL = "could not be assumed because it does not exist or the trusted entity is not correct"


def create_eks(box: Box, role: str, name: str = "e1") -> None:
    box.client("eks").create_cluster(name=name, roleArn=role,
                                     resourcesVpcConfig={"subnetIds": SUBNETS})


def refusal(call: object, *args: object, **kw: object) -> tuple[str, str]:
    with pytest.raises(ClientError) as err:
        call(*args, **kw)  # type: ignore[operator]
    return err.value.response["Error"]["Code"], err.value.response["Error"]["Message"]


def create_hyperpod(box: Box, name: str, *groups: dict[str, object]) -> None:
    subnet, sg = network(box)
    arn = ensure_eks(box, subnet)
    box.client("sagemaker").create_cluster(
        ClusterName=name, InstanceGroups=list(groups), NodeRecovery="Automatic",
        VpcConfig={"Subnets": [subnet], "SecurityGroupIds": [sg]},
        Orchestrator={"Eks": {"ClusterArn": arn}})


def described(box: Box, name: str) -> dict[str, object]:
    return dict(box.client("sagemaker").describe_cluster(ClusterName=name))


# EKS cluster role ---------------------------------------------------------------------------
def test_eks_refuses_a_role_that_does_not_exist(box: Box) -> None:
    missing = "arn:aws:iam::123456789012:role/nobody"
    code, message = refusal(create_eks, box, missing)
    assert code == "InvalidParameterException"
    assert message == f"Role with arn: {missing}, {EKS_REFUSAL}"


def test_eks_refuses_a_role_that_does_not_trust_eks(box: Box) -> None:
    arn = make_role(box.client, "sm-only", ("sagemaker.amazonaws.com",))
    box.advance(LAG_SECONDS)
    code, message = refusal(create_eks, box, arn)
    assert (code, EKS_REFUSAL in message) == ("InvalidParameterException", True)


def test_a_new_role_is_refused_until_iam_propagates(box: Box) -> None:
    arn = make_role(box.client, "fresh", ("eks.amazonaws.com",))
    code, message = refusal(create_eks, box, arn)
    assert code == "InvalidParameterException" and EKS_REFUSAL in message
    box.advance(LAG_SECONDS)
    create_eks(box, arn)
    assert box.client("eks").describe_cluster(name="e1")["cluster"]["roleArn"] == arn


def test_without_lag_a_new_role_is_usable_at_once(box: Box) -> None:
    box.sandbox.world.lag = False
    create_eks(box, make_role(box.client, "fresh", ("eks.amazonaws.com",)))
    assert box.client("eks").describe_cluster(name="e1")["cluster"]["status"] == "CREATING"


def test_a_changed_trust_policy_propagates_too(box: Box) -> None:
    arn = make_role(box.client, "switch", ("sagemaker.amazonaws.com",))
    box.advance(LAG_SECONDS)
    assert refusal(create_eks, box, arn)[0] == "InvalidParameterException"
    box.client("iam").update_assume_role_policy(RoleName="switch",
                                                PolicyDocument=trust("eks.amazonaws.com"))
    assert refusal(create_eks, box, arn)[0] == "InvalidParameterException"
    box.advance(LAG_SECONDS)
    create_eks(box, arn)


def test_a_role_deleted_and_made_again_propagates_again(box: Box) -> None:
    arn = make_role(box.client, "again", ("eks.amazonaws.com",))
    box.advance(LAG_SECONDS)
    create_eks(box, arn)
    box.client("iam").delete_role(RoleName="again")
    box.advance(LAG_SECONDS)
    assert make_role(box.client, "again", ("eks.amazonaws.com",)) == arn
    assert refusal(create_eks, box, arn, "e2")[0] == "InvalidParameterException"
    box.advance(LAG_SECONDS)
    create_eks(box, arn, "e2")


# HyperPod execution role --------------------------------------------------------------------
def test_hyperpod_refuses_an_execution_role_it_cannot_assume(box: Box) -> None:
    eks_only = make_role(box.client, "eks-only", ("eks.amazonaws.com",))
    box.advance(LAG_SECONDS)
    for role in ("arn:aws:iam::123456789012:role/nobody", eks_only):
        code, message = refusal(create_hyperpod, box, "hp1",
                                group("w", "ml.m5.xlarge", 1, ExecutionRole=role))
        assert code == "ValidationException"
        assert message.startswith(f"Could not assume role {role}.")
        assert "'sagemaker.amazonaws.com'" in message


def test_hyperpod_refuses_a_just_created_execution_role(box: Box) -> None:
    subnet, sg = network(box)
    eks = ensure_eks(box, subnet)
    role = make_role(box.client, "new-exec", inline=read_scripts("sagemaker-lc"))
    spec = group("w", "ml.m5.xlarge", 1, ExecutionRole=role)

    def create() -> None:
        box.client("sagemaker").create_cluster(
            ClusterName="hp1", InstanceGroups=[spec], NodeRecovery="Automatic",
            VpcConfig={"Subnets": [subnet], "SecurityGroupIds": [sg]},
            Orchestrator={"Eks": {"ClusterArn": eks}})

    assert refusal(create)[0] == "ValidationException"
    box.advance(LAG_SECONDS)
    create()
    assert described(box, "hp1")["ClusterStatus"] == "Creating"


def lifecycle_group(box: Box, bucket: str, *, managed: bool = True,
                    inline: dict[str, object] | None = None) -> dict[str, object]:
    """A group whose role has the AWS managed instance policy (and `inline`), reading
    s3://<bucket>/scripts/on_create.sh."""
    role = make_role(box.client, f"exec-{bucket}", ("sagemaker.amazonaws.com",), inline)
    if managed:
        box.client("iam").attach_role_policy(RoleName=f"exec-{bucket}",
                                             PolicyArn=INSTANCE_POLICY)
    box.advance(LAG_SECONDS)
    return group("w", "ml.m5.xlarge", 1, ExecutionRole=role, LifeCycleConfig={
        "SourceS3Uri": f"s3://{bucket}/scripts/", "OnCreate": "on_create.sh"})


def test_the_managed_policy_alone_reads_only_sagemaker_buckets(box: Box) -> None:
    """AmazonSageMakerClusterInstanceRolePolicy allows s3:GetObject on arn:aws:s3:::sagemaker-*
    only: a podplane-* bucket fails at bootstrap with HyperPod's lifecycle message."""
    put_scripts(box.client, "sagemaker-ok")
    put_scripts(box.client, "podplane-scripts")
    create_hyperpod(box, "good", lifecycle_group(box, "sagemaker-ok"))
    create_hyperpod(box, "bad", lifecycle_group(box, "podplane-scripts"))
    box.advance(1300)
    assert described(box, "good")["ClusterStatus"] == "InService"
    bad = described(box, "bad")
    assert bad["ClusterStatus"] == "Failed"
    assert str(bad["FailureMessage"]).startswith("Lifecycle scripts did not run successfully.")


def test_an_inline_policy_on_the_bucket_makes_the_scripts_readable(box: Box) -> None:
    put_scripts(box.client, "podplane-scripts")
    spec = lifecycle_group(box, "podplane-scripts", inline=read_scripts("podplane-scripts"))
    create_hyperpod(box, "hp1", spec)
    box.advance(1300)
    assert described(box, "hp1")["ClusterStatus"] == "InService"


def test_a_missing_script_or_an_explicit_deny_fails_at_bootstrap(box: Box) -> None:
    box.client("s3").create_bucket(Bucket="sagemaker-empty", CreateBucketConfiguration={
        "LocationConstraint": "us-west-2"})
    put_scripts(box.client, "sagemaker-denied")
    deny = {"Version": "2012-10-17", "Statement": [
        {"Effect": "Deny", "Action": "s3:Get*", "Resource": "arn:aws:s3:::sagemaker-denied/*"}]}
    create_hyperpod(box, "empty", lifecycle_group(box, "sagemaker-empty"))
    create_hyperpod(box, "denied", lifecycle_group(box, "sagemaker-denied", inline=deny))
    box.advance(1300)
    for name in ("empty", "denied"):
        assert described(box, name)["ClusterStatus"] == "Failed"


def test_a_group_added_with_unreadable_scripts_degrades(box: Box) -> None:
    put_scripts(box.client, "podplane-scripts")
    create_hyperpod(box, "hp1", group("ok", "ml.m5.xlarge", 1))
    box.advance(700)
    bad = {**lifecycle_group(box, "podplane-scripts"), "InstanceGroupName": "bad"}
    sm = box.client("sagemaker")
    sm.update_cluster(ClusterName="hp1", InstanceGroups=[group("ok", "ml.m5.xlarge", 1), bad])
    box.advance(700)
    cluster = described(box, "hp1")
    groups = {g["InstanceGroupName"]: g for g in cluster["InstanceGroups"]}  # type: ignore[attr-defined]
    assert groups["bad"]["Status"] == "Degraded" and groups["bad"]["CurrentCount"] == 0
    assert str(cluster["FailureMessage"]).startswith("Lifecycle scripts did not run")


def test_update_cluster_checks_the_execution_roles_too(box: Box) -> None:
    create_hyperpod(box, "hp1", group("ok", "ml.m5.xlarge", 1))
    box.advance(700)
    box.client("iam").update_assume_role_policy(
        RoleName=ROLE.rsplit("/", 1)[-1], PolicyDocument=trust("eks.amazonaws.com"))
    box.advance(LAG_SECONDS)
    code, _ = refusal(box.client("sagemaker").update_cluster, ClusterName="hp1",
                      InstanceGroups=[group("ok", "ml.m5.xlarge", 2)])
    assert code == "ValidationException"
    autoscaling_role_is_hyperpods_and_may_scale(box)


def autoscaling_role_is_hyperpods_and_may_scale(box: Box) -> None:
    """Autoscaling's ClusterRole (SageMaker docs, sagemaker-hyperpod-eks-autoscaling-iam):
    trusted by hyperpod.sagemaker.amazonaws.com, allowed BatchAddClusterNodes and
    BatchDeleteClusterNodes. A role trusting sagemaker.amazonaws.com is refused, changing
    nothing; one without the permissions is accepted, but Karpenter's launch is denied."""
    sm = box.client("sagemaker")
    wrong = make_role(box.client, "as-sagemaker", ("sagemaker.amazonaws.com",))
    right = make_role(box.client, "as-hyperpod", ("hyperpod.sagemaker.amazonaws.com",))
    box.advance(LAG_SECONDS)

    def enable(role: str) -> None:
        sm.update_cluster(ClusterName="hp1", ClusterRole=role, NodeProvisioningMode="Continuous",
                          AutoScaling={"Mode": "Enable", "AutoScalerType": "Karpenter"})

    code, message = refusal(enable, wrong)
    assert code == "ValidationException" and message.startswith(f"Could not assume role {wrong}")
    assert "'hyperpod.sagemaker.amazonaws.com'" in message
    unchanged = described(box, "hp1")
    assert "AutoScaling" not in unchanged and "ClusterRole" not in unchanged
    enable(right)
    assert described(box, "hp1")["AutoScaling"]["Mode"] == "Enable"  # type: ignore[index]
    view = box.sandbox.kube_view
    denied = view.add_autoscaled_nodes("hp1", "ok", 1)
    assert denied is not None and "sagemaker:BatchAddClusterNodes" in denied
    box.client("iam").put_role_policy(RoleName="as-hyperpod", PolicyName="scale",
                                      PolicyDocument=json.dumps(SCALE_NODES))
    assert view.add_autoscaled_nodes("hp1", "ok", 1) is None
    assert [e["target"] for e in box.ledger(action="BatchAddClusterNodes")] == ["hp1"]


# the permissions policy that page gives the role
SCALE_NODES = {"Version": "2012-10-17", "Statement": [{
    "Effect": "Allow",
    "Action": ["sagemaker:BatchAddClusterNodes", "sagemaker:BatchDeleteClusterNodes"],
    "Resource": "arn:aws:sagemaker:*:*:cluster/*",
    "Condition": {"StringEquals": {"aws:ResourceAccount": "${aws:PrincipalAccount}"}}}]}


# EKS Pod Identity ---------------------------------------------------------------------------
def test_pod_identity_needs_an_existing_role_that_trusts_pods_with_tag_session(box: Box) -> None:
    cluster = ensure_eks(box, network(box)[0]).rsplit("/", 1)[-1]
    eks = box.client("eks")

    def associate(role: str) -> None:
        eks.create_pod_identity_association(clusterName=cluster, namespace="kube-system",
                                            serviceAccount="s3-csi", roleArn=role)

    code, message = refusal(associate, "arn:aws:iam::123456789012:role/nobody")
    assert (code, message) == ("InvalidParameterException",
                               "Role provided in the request does not exist")
    fresh = make_role(box.client, "fresh-pods", ("pods.eks.amazonaws.com",))
    assert refusal(associate, fresh)[1] == "Role provided in the request does not exist"
    no_tag = json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": {"Service": "pods.eks.amazonaws.com"},
        "Action": "sts:AssumeRole"}]})
    half = box.client("iam").create_role(RoleName="half", AssumeRolePolicyDocument=no_tag)
    box.advance(LAG_SECONDS)
    assert refusal(associate, half["Role"]["Arn"])[1] == \
        "Trust policy of the role provided is invalid"
    associate(fresh)
