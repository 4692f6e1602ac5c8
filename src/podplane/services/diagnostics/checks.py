"""The checks of `podplane doctor`, typed against the AWS ports only (read-only calls)."""

from __future__ import annotations

from dataclasses import dataclass

from podplane.cloud.ports_aws import AccountPort, EksPort, HyperPodPort, QuotasPort, Shape
from podplane.domain import aws_policy
from podplane.domain.doctor import (
    SLR_NAME,
    Finding,
    Status,
    access_entry_finding,
    iam_principal,
    permission_finding,
    quota_finding,
    slr_finding,
)
from podplane.domain.errors import CloudError

CREDENTIALS_FIX = ("Give the control plane AWS credentials: AWS_PROFILE, the AWS_ACCESS_KEY_ID "
                   "pair, or an instance/pod role (the boto3 default chain).")


@dataclass(frozen=True)
class DoctorPorts:
    account: AccountPort
    quotas: QuotasPort
    hyperpod: HyperPodPort
    eks: EksPort


@dataclass(frozen=True)
class Identity:
    account: str
    caller_arn: str
    partition: str
    principal_arn: str | None  # the IAM user or role whose policies apply


async def identity(ports: DoctorPorts) -> tuple[Identity | None, list[Finding]]:
    try:
        me = await ports.account.caller_identity()
    except CloudError as err:
        return None, [Finding("credentials", Status.FAIL, err.message, CREDENTIALS_FIX)]
    who = _identity(me)
    region = ports.account.region
    found = [Finding("credentials", Status.OK, f"{who.caller_arn} (account {who.account})."),
             Finding("region", Status.OK, f"{region}.") if region else
             Finding("region", Status.FAIL, "No region resolved.",
                     "Set PODPLANE_REGION or AWS_REGION (or a region in the AWS profile).")]
    return who, found


def _identity(me: Shape) -> Identity:
    arn, account = str(me["Arn"]), str(me["Account"])
    partition = arn.split(":")[1]
    entity = iam_principal(arn)
    if entity is None:
        principal = None
    elif arn.split(":")[2] == "iam":  # already the IAM ARN, with its path
        principal = arn
    else:
        principal = f"arn:{partition}:iam::{account}:{entity[0]}/{entity[1]}"
    return Identity(account, arn, partition, principal)


async def permissions(ports: DoctorPorts, who: Identity) -> tuple[Finding, set[str]]:
    """Simulate docs/aws-permissions.md's policy for our principal -> (finding, denied)."""
    if who.principal_arn is None:
        return Finding("permissions", Status.WARN,
                       f"{who.caller_arn} is not an IAM user or role: nothing to simulate.",
                       "Run podplane as an IAM role or user with the policy of "
                       "docs/aws-permissions.md."), set()
    denied: list[str] = []
    try:
        for probe in aws_policy.probes(who.account, ports.account.region, who.partition):
            results = await ports.account.simulate(who.principal_arn, list(probe.actions),
                                                   list(probe.resources), dict(probe.context))
            allowed = {r["EvalActionName"] for r in results if r["EvalDecision"] == "allowed"}
            note = "".join(f" ({k}={v})" for k, v in probe.context)
            denied += [f"{a}{note}" for a in probe.actions if a not in allowed]
    except CloudError as err:
        fix = ("Run podplane as an IAM user or role of this account that has the policy of "
               "docs/aws-permissions.md." if err.code == "cloud_not_found" else
               "Allow iam:SimulatePrincipalPolicy on podplane's own identity "
               "(OidcAndSimulate in docs/aws-permissions.md).")
        return Finding("permissions", Status.WARN,
                       f"Cannot simulate the policies of {who.principal_arn}: {err.message}",
                       fix), set()
    names = sorted(dict.fromkeys(denied))
    return permission_finding(who.principal_arn, names), {d.split(" ")[0] for d in names}


async def service_linked_role(ports: DoctorPorts, denied: set[str] | None) -> Finding:
    try:
        exists = await ports.account.get_role(SLR_NAME) is not None
    except CloudError as err:
        return Finding("service_linked_role", Status.WARN,
                       f"Cannot read {SLR_NAME}: {err.message}", "Allow iam:GetRole on it.")
    may_create = None if denied is None else "iam:CreateServiceLinkedRole" not in denied
    return slr_finding(exists, may_create)


async def quota(ports: DoctorPorts, instance_type: str, count: int) -> Finding:
    try:  # the applied value, else AWS's default (often 0 for GPU types in a new account)
        found = await ports.quotas.cluster_quota(instance_type)
        in_use = await _in_use(ports.hyperpod, instance_type)
    except CloudError as err:
        return Finding("quota", Status.WARN, f"Cannot read the quota: {err.message}",
                       err.hint or "Allow servicequotas:List* and sagemaker:ListClusters.")
    limit = None if found is None else int(found["value"])
    source = "AWS default" if found and found["source"] == "default" else "applied"
    return quota_finding(instance_type, count, limit, in_use, source)


async def _in_use(hyperpod: HyperPodPort, instance_type: str) -> int:
    """Instances of this type that live HyperPod clusters hold (what the quota counts)."""
    total = 0
    for summary in await hyperpod.list_clusters():
        if summary.get("ClusterStatus") not in ("Failed", "Deleting"):
            described = await hyperpod.describe_cluster(summary["ClusterName"]) or {}
            total += sum(int(g.get("TargetCount", g.get("CurrentCount", 0)))
                         for g in described.get("InstanceGroups", [])
                         if g.get("InstanceType") == instance_type)
    return total


async def access_entry(ports: DoctorPorts, who: Identity, eks_cluster: str) -> Finding:
    principal = who.principal_arn or who.caller_arn
    try:
        described = await ports.eks.describe_cluster(eks_cluster)
        if described is None:
            return Finding("access_entry", Status.FAIL, f"No EKS cluster named {eks_cluster}.",
                           "Check the name with `aws eks list-clusters`.")
        entries = await ports.eks.list_access_entries(eks_cluster)
    except CloudError as err:
        return Finding("access_entry", Status.WARN, f"Cannot list access entries of "
                       f"{eks_cluster}: {err.message}", "Allow eks:ListAccessEntries.")
    mode = (described.get("accessConfig") or {}).get("authenticationMode")
    return access_entry_finding(eks_cluster, principal, principal in entries, mode)
