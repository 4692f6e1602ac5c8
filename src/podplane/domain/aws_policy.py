"""The least-privilege IAM policy for podplane's own identity (docs/aws-permissions.md).

One statement per kind of resource, scoped the way each service's authorization reference
allows (https://docs.aws.amazon.com/service-authorization/latest/reference/): roles and buckets
by the `podplane-` name prefix, EC2 deletes by podplane's `podplane:managed` tag, PassRole by the
service it is passed to, the service-linked roles by `iam:AWSServiceName`. A test keeps this
equal to the JSON in the doc and to the set of AWS calls the code makes; `podplane doctor`
simulates exactly this policy against the running identity.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MANAGED = {"aws:ResourceTag/podplane:managed": "true"}
HYPERPOD_SLR = ("arn:aws:iam::*:role/aws-service-role/hyperpod.sagemaker.amazonaws.com/"
                "AWSServiceRoleForSageMakerHyperPod")
EKS_SLR = "arn:aws:iam::*:role/aws-service-role/eks.amazonaws.com/AWSServiceRoleForAmazonEKS"
FSX_SLR = "arn:aws:iam::*:role/aws-service-role/fsx.amazonaws.com/*"
FSX_OWN = {"podplane:feature": "fsx-lustre"}  # the tag the fsx-lustre feature puts on its own
AMP_OWN = {"podplane:feature": "hyperpod-observability"}  # the observability feature's workspace
# Authorized per MLflow REST call (Service Authorization Reference, Amazon SageMaker with
# MLflow); no botocore model has them: podplane sends them to the tracking server itself.
MLFLOW_REST = frozenset({"sagemaker-mlflow:GetExperimentByName", "sagemaker-mlflow:SearchRuns"})
# Every EKS resource type: each action listed applies only to its own types (cluster, add-on,
# access entry, Pod Identity association), so naming them one by one granted no less
EKS_RESOURCES = "arn:aws:eks:*:*:*"


OWN_ROLES = ("arn:aws:iam::*:role/podplane-*",
             "arn:aws:iam::*:role/SageMakerHyperPodInference-podplane-*")
# The managed policy every role podplane makes carries as its permissions boundary (made by
# deploy/cloudformation, or by hand: docs/aws-permissions.md); PODPLANE_ROLE_PERMISSIONS_
# BOUNDARY names it to the code.
BOUNDARY_NAME = "podplane-boundary"
BOUNDED = {"iam:PermissionsBoundary": f"arn:aws:iam::*:policy/{BOUNDARY_NAME}*"}
# The AWS managed policies podplane attaches (domain/iam_policies.py, features/catalog.py)
ATTACHED = ("arn:aws:iam::aws:policy/AmazonEKSClusterPolicy",
            "arn:aws:iam::aws:policy/AmazonSageMakerClusterInstanceRolePolicy",
            "arn:aws:iam::aws:policy/CloudWatchAgentServerPolicy",
            # the spaces feature's roles: the Spaces controller's, the EBS CSI driver's
            "arn:aws:iam::aws:policy/AmazonSageMakerSpacesControllerPolicy",
            "arn:aws:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy")
# (copied per statement: one list in two places is a YAML alias, which CloudFormation refuses)
FEATURE_STORAGE = ("arn:aws:fsx:*:*:file-system/*", "arn:aws:aps:*:*:workspace/*")


def _tag_is(kind: str) -> dict[str, Any]:
    """The feature tag podplane puts on the file system and the workspace it makes."""
    values = sorted({*FSX_OWN.values(), *AMP_OWN.values()})
    assert set(FSX_OWN) == set(AMP_OWN) == {"podplane:feature"}
    return {f"aws:{kind}/podplane:feature": values}


def _stmt(sid: str, actions: list[str], resource: str | list[str],
          condition: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"Sid": sid, "Effect": "Allow", "Action": sorted(actions),
                           "Resource": resource}
    if condition:
        out["Condition"] = condition
    return out


POLICY: dict[str, Any] = {"Version": "2012-10-17", "Statement": [
    # Reads that IAM cannot scope to a resource (the reference lists no resource type for them),
    # and aps:DescribeWorkspace, which the observability feature may call on any workspace (an
    # existing one given by id) so workspace/* would grant no less.
    # A customer managed policy holds 6,144 characters: statements whose resource types differ
    # share one statement where they may (an action never applies to another type's ARN).
    _stmt("ReadAccount", [
        "ec2:DescribeAddresses", "ec2:DescribeAvailabilityZones",
        "ec2:DescribeInstanceTypeOfferings", "ec2:DescribeInternetGateways",
        "ec2:DescribeNatGateways", "ec2:DescribeNetworkInterfaces", "ec2:DescribeRouteTables",
        "ec2:DescribeSecurityGroupRules", "ec2:DescribeSecurityGroups",
        "ec2:DescribeSubnets", "ec2:DescribeVpcAttribute", "ec2:DescribeVpcEndpoints",
        "ec2:DescribeVpcs", "aps:DescribeWorkspace", "aps:ListWorkspaces",
        "eks:DescribeAddonVersions", "eks:ListClusters", "fsx:DescribeFileSystems",
        "iam:ListOpenIDConnectProviders",
        "sagemaker:ListClusters", "sagemaker:ListTrainingPlans",
        "sagemaker:SearchTrainingPlanOfferings", "servicequotas:ListAWSDefaultServiceQuotas",
        "servicequotas:ListServiceQuotas", "sts:GetCallerIdentity"], "*"),
    # Creating network resources: their ids do not exist yet, so no resource scoping
    _stmt("CreateNetwork", [
        "ec2:AllocateAddress", "ec2:AssociateRouteTable", "ec2:AttachInternetGateway",
        "ec2:AuthorizeSecurityGroupEgress", "ec2:AuthorizeSecurityGroupIngress",
        "ec2:CreateInternetGateway", "ec2:CreateNatGateway", "ec2:CreateRoute",
        "ec2:CreateRouteTable", "ec2:CreateSecurityGroup", "ec2:CreateSubnet",
        "ec2:CreateVpc", "ec2:CreateVpcEndpoint", "ec2:ModifyVpcAttribute",
        # reconcile on every run: re-point a default route, endpoint route tables, a /16
        "ec2:AssociateVpcCidrBlock", "ec2:ModifyVpcEndpoint", "ec2:ReplaceRoute",
        # the fsx-lustre feature's Lustre ports on the cluster's node group (it revokes only
        # the rules it tagged; an imported cluster's group carries no podplane tag to scope
        # by; the action applies to security groups alone, so * grants no more)
        "ec2:RevokeSecurityGroupIngress"], "*"),
    # Tags only as a resource is made (EC2 User Guide, "Grant permission to tag resources
    # during creation": ec2:CreateAction exists only then): a tag added later could forge
    # podplane:managed on any VPC and open it to DeleteOwnNetwork (issue 34, S7)
    _stmt("TagOnCreate", ["ec2:CreateTags"], "*", {"Null": {"ec2:CreateAction": "false"}}),
    # Deleting only what podplane tagged (aws:ResourceTag is supported by each of these)
    _stmt("DeleteOwnNetwork", [
        "ec2:DeleteInternetGateway", "ec2:DeleteNatGateway", "ec2:DeleteRouteTable",
        "ec2:DeleteSecurityGroup", "ec2:DeleteSubnet", "ec2:DeleteVpc",
        "ec2:DeleteVpcEndpoints", "ec2:DetachInternetGateway", "ec2:DisassociateRouteTable",
        "ec2:ReleaseAddress"], "*", {"StringEquals": MANAGED}),
    # the fsx-lustre feature's file system and the hyperpod-observability feature's Prometheus
    # workspace: made, changed and deleted by their feature tag; an existing file system or
    # workspace given by id is only described
    _stmt("FeatureStorageCreateOwn", ["fsx:CreateFileSystem", "fsx:TagResource",
                                      "aps:CreateWorkspace", "aps:TagResource"],
          list(FEATURE_STORAGE), {"StringEquals": _tag_is("RequestTag")}),
    _stmt("FeatureStorageChangeOwn", ["fsx:DeleteFileSystem", "fsx:UpdateFileSystem",
                                      "aps:DeleteWorkspace"],
          list(FEATURE_STORAGE), {"StringEquals": _tag_is("ResourceTag")}),
    # Imported clusters have any name: EKS resources are scoped by type, not by name
    _stmt("Eks", [
        "eks:AssociateAccessPolicy", "eks:CreateAccessEntry", "eks:CreateAddon",
        "eks:CreateCluster", "eks:CreatePodIdentityAssociation", "eks:DeleteAccessEntry",
        "eks:DeleteAddon", "eks:DeleteCluster", "eks:DeletePodIdentityAssociation",
        "eks:DescribeAccessEntry", "eks:DescribeAddon", "eks:DescribeCluster",
        "eks:DescribePodIdentityAssociation", "eks:DescribeUpdate", "eks:ListAccessEntries",
        "eks:ListAddons",
        "eks:ListPodIdentityAssociations", "eks:UpdateAddon", "eks:UpdateClusterConfig"],
        EKS_RESOURCES),
    # HyperPod clusters and training plans; the mlflow feature's tracking server (podplane's is
    # named podplane-<cluster>; a server the user names is only described) and the job view's
    # reads of the runs logged there. One statement (the size limit above): each action applies
    # to its own resource types, except sagemaker:ListTags, which also reads a tracking
    # server's tags
    _stmt("SageMaker", [
        "sagemaker:AddTags", "sagemaker:BatchDeleteClusterNodes",
        "sagemaker:BatchRebootClusterNodes", "sagemaker:BatchReplaceClusterNodes",
        "sagemaker:CreateCluster", "sagemaker:CreateTrainingPlan", "sagemaker:DeleteCluster",
        "sagemaker:DescribeCluster", "sagemaker:DescribeClusterNode",
        "sagemaker:ListClusterEvents", "sagemaker:ListClusterNodes", "sagemaker:ListTags",
        "sagemaker:UpdateCluster", "sagemaker:UpdateClusterSoftware",
        "sagemaker:CreateMlflowTrackingServer", "sagemaker:DeleteMlflowTrackingServer",
        "sagemaker:DescribeMlflowTrackingServer", "sagemaker:UpdateMlflowTrackingServer",
        *sorted(MLFLOW_REST)],
        ["arn:aws:sagemaker:*:*:cluster/*", "arn:aws:sagemaker:*:*:training-plan/*",
         "arn:aws:sagemaker:*:*:mlflow-tracking-server/*"]),
    # Reading, tagging and taking rights away from podplane's roles (deleting included)
    _stmt("OwnRoles", [
        "iam:DeleteRole", "iam:DeleteRolePolicy", "iam:DetachRolePolicy", "iam:GetRole",
        "iam:GetRolePolicy", "iam:ListAttachedRolePolicies", "iam:ListRolePolicies",
        "iam:TagRole"],
        # the inference operator add-on refuses an execution role without the second prefix
        list(OWN_ROLES)),
    # Giving rights only inside the boundary (IAM User Guide, "Permissions boundaries for IAM
    # entities", delegating with iam:PermissionsBoundary): a role podplane makes can never
    # do more than podplane-boundary allows, whatever policy it is given; and of the
    # managed policies only those podplane attaches (iam:PolicyARN, present on
    # AttachRolePolicy alone, hence IfExists) (issue 34, S7)
    _stmt("Bounded", ["iam:AttachRolePolicy", "iam:CreateRole", "iam:PutRolePolicy"],
          list(OWN_ROLES), {"ArnLike": BOUNDED,
                            "ArnLikeIfExists": {"iam:PolicyARN": list(ATTACHED)}}),
    _stmt("PassOwnRoles", ["iam:PassRole"], "arn:aws:iam::*:role/podplane-*",
          {"StringEquals": {"iam:PassedToService": [
              "eks.amazonaws.com", "pods.eks.amazonaws.com", "sagemaker.amazonaws.com"]}}),
    # created by service name; read (GetRole carries no iam:AWSServiceName, hence IfExists)
    _stmt("ServiceLinkedRoles", ["iam:CreateServiceLinkedRole", "iam:GetRole"],
          [HYPERPOD_SLR, EKS_SLR, FSX_SLR], {"StringEqualsIfExists": {"iam:AWSServiceName": [
              "eks.amazonaws.com", "fsx.amazonaws.com", "hyperpod.sagemaker.amazonaws.com"]}}),
    # the inference operator feature registers the cluster's issuer for IRSA; cluster delete
    # removes a provider podplane made. With `podplane doctor`'s simulation of users and roles
    # in one statement (the size limit above): the OIDC actions apply to oidc-provider ARNs
    # only, iam:SimulatePrincipalPolicy to users and roles only, so neither grants more
    _stmt("OidcAndSimulate", ["iam:CreateOpenIDConnectProvider",
                              "iam:DeleteOpenIDConnectProvider", "iam:GetOpenIDConnectProvider",
                              "iam:TagOpenIDConnectProvider", "iam:SimulatePrincipalPolicy"],
          ["arn:aws:iam::*:oidc-provider/oidc.eks.*.amazonaws.com/id/*",
           "arn:aws:iam::*:role/*", "arn:aws:iam::*:user/*"]),
    # buckets and their objects (a bucket action never applies to an object's ARN)
    _stmt("OwnBuckets", [
        "s3:CreateBucket", "s3:DeleteObject", "s3:GetBucketLocation", "s3:GetBucketTagging",
        "s3:ListBucket", "s3:PutBucketTagging", "s3:PutObject"],
        ["arn:aws:s3:::podplane-*", "arn:aws:s3:::podplane-*/*"]),
]}

# Actions no boto3 call of podplane names, that AWS checks on the caller anyway.
IMPLIED: dict[str, str] = {
    "iam:PassRole": "EKS CreateCluster and CreatePodIdentityAssociation, SageMaker "
                    "CreateCluster pass podplane's roles",
    "iam:CreateServiceLinkedRole": "the first EKS or HyperPod cluster or FSx file system of "
                                   "an account creates the service's service-linked role with "
                                   "the caller's rights",
    "fsx:TagResource": "CreateFileSystem with Tags (FSx User Guide, tag on creation)",
    "aps:TagResource": "CreateWorkspace with tags (Service Authorization Reference for "
                       "Amazon Managed Service for Prometheus)",
    "iam:TagRole": "CreateRole with Tags (IAM User Guide, permissions for tagging)",
    "iam:TagOpenIDConnectProvider": "CreateOpenIDConnectProvider with Tags (IAM User Guide, "
                                    "permissions for tagging)",
    "ec2:CreateTags": "Create* calls with TagSpecifications (EC2 tag-on-create)",
    "sagemaker:AddTags": "CreateCluster and CreateMlflowTrackingServer with Tags (SageMaker "
                         "tagging permissions)",
    "sagemaker-mlflow:GetExperimentByName": "the job view reads the job's MLflow experiment "
                                            "(MLflow REST, services/features/mlflow_runs.py)",
    "sagemaker-mlflow:SearchRuns": "the job view reads the job's newest MLflow run",
    "eks:DescribeAccessEntry": "HyperPod creates its access entries with the caller's rights",
    "eks:DeleteAccessEntry": "HyperPod removes its access entries with the caller's rights",
}


@dataclass(frozen=True)
class Probe:
    """One SimulatePrincipalPolicy call: actions on sample resources with one context."""

    statement: str
    actions: tuple[str, ...]
    resources: tuple[str, ...]
    context: tuple[tuple[str, str], ...] = ()


def policy_actions(policy: dict[str, Any] = POLICY) -> set[str]:
    return {a for s in policy["Statement"] for a in _list(s["Action"])}


def probes(account: str, region: str, partition: str = "aws") -> list[Probe]:
    """What to simulate so that each granted action is tried on a resource of the shape the
    policy grants it on, with the condition values the policy expects."""
    out = []
    for stmt in POLICY["Statement"]:
        resources = tuple(_sample(r, account, region, partition) for r in _list(stmt["Resource"]))
        actions = tuple(_list(stmt["Action"]))
        conditions = [(key, value) for test in stmt.get("Condition", {}).values()
                      for key, values in test.items() for value in _list(values)]
        if not conditions:
            out.append(Probe(stmt["Sid"], actions, resources))
        first = {k: v for k, v in reversed(conditions)}   # each key's first accepted value
        for key, value in conditions:  # each accepted value must work (the others' first)
            context = tuple(sorted({**first, key: value}.items()))
            out.append(Probe(stmt["Sid"], actions, resources, context))
    return out


def _sample(pattern: str, account: str, region: str, partition: str) -> str:
    """arn:aws:iam::*:role/podplane-* -> arn:<partition>:iam::<account>:role/podplane-doctor."""
    if pattern == "*":
        return "*"
    parts = pattern.split(":", 5)
    parts[1] = partition
    if parts[3] == "*":
        parts[3] = region
    if parts[4] == "*":
        parts[4] = account
    if parts[5] == "*":  # any resource of the service: try the kind podplane acts on most
        parts[5] = WHOLE_SERVICE_SAMPLE.get(parts[2], "*")
    return ":".join(parts).replace("*", "doctor")


# A resource of the shape AWS names it (EKS: arn:...:eks:region:account:cluster/name, per the
# Service Authorization Reference) for statements granted on a service's every resource.
WHOLE_SERVICE_SAMPLE = {"eks": "cluster/doctor"}


def _list(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else list(value)
