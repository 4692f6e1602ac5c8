"""`podplane doctor` findings: what an account lacks for a create, each with its fix (pure).

A diagnosis (domain/diagnostics) reuses `Finding`, with the evidence it rests on."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

SLR_NAME = "AWSServiceRoleForSageMakerHyperPod"
SLR_SERVICE = "hyperpod.sagemaker.amazonaws.com"
PERMISSIONS_DOC = "docs/aws-permissions.md"


class Status(StrEnum):
    """ok: nothing to do; warn: could not tell, or not blocking; fail: a create would fail."""

    OK = "ok"
    WARN = "warn"
    FAIL = "fail"


@dataclass(frozen=True)
class Evidence:
    """What a finding rests on and where it was read, e.g. source "hyperpod:ListClusterNodes",
    "kubernetes:Node labels", "kubernetes:Event", "operation step"."""

    source: str
    detail: str


@dataclass(frozen=True)
class Finding:
    """One check's answer; `fix` is what to do about it (empty when ok); `evidence` is what
    a diagnosis read (doctor's checks state theirs in `detail`)."""

    check: str
    status: Status
    detail: str
    fix: str = ""
    evidence: tuple[Evidence, ...] = ()


def worst(findings: list[Finding]) -> Status:
    statuses = {f.status for f in findings}
    return next((s for s in (Status.FAIL, Status.WARN) if s in statuses), Status.OK)


def iam_principal(caller_arn: str) -> tuple[str, str] | None:
    """The IAM entity behind an STS caller ARN, as (kind, name): an assumed role's session
    is simulated as its role (IAM policies belong to the role, not the session)."""
    resource = caller_arn.split(":", 5)[-1]
    kind, _, rest = resource.partition("/")
    if kind == "assumed-role":
        return "role", rest.split("/")[0]
    if kind in ("user", "role"):
        return kind, rest.rsplit("/", 1)[-1]
    return None  # the account root, a federated user: nothing to simulate


def slr_finding(exists: bool, may_create: bool | None) -> Finding:
    if exists:
        return Finding("service_linked_role", Status.OK, f"{SLR_NAME} exists.")
    detail = f"{SLR_NAME} does not exist yet; HyperPod creates it on the first CreateCluster"
    if may_create:
        return Finding("service_linked_role", Status.OK,
                       detail + " and podplane's identity may create it.")
    fix = (f"aws iam create-service-linked-role --aws-service-name {SLR_SERVICE}, or "
           f"grant the ServiceLinkedRoles statement of {PERMISSIONS_DOC}.")
    if may_create is None:  # the simulation could not run: unknown, not known bad
        return Finding("service_linked_role", Status.WARN,
                       detail + "; whether podplane's identity may create it is unknown.", fix)
    return Finding("service_linked_role", Status.FAIL,
                   detail + ", which needs iam:CreateServiceLinkedRole.", fix)


def quota_finding(instance_type: str, count: int, limit: int | None, in_use: int,
                  source: str) -> Finding:
    name = f"'{instance_type} for cluster usage'"
    if limit is None:
        return Finding("quota", Status.WARN, f"Service Quotas has no {name} quota here.",
                       "Check that the instance type is offered by HyperPod in this region.")
    free = max(0, limit - in_use)
    where = f"{name} is {limit} ({source}), {in_use} in use"
    if count <= free:
        return Finding("quota", Status.OK, f"{where}: room for {count}.")
    return Finding("quota", Status.FAIL, f"{where}: {count} asked, {free} free.",
                   f"Request an increase of {name} to at least {in_use + count} in the "
                   "Service Quotas console (service SageMaker), or ask for fewer instances.")


def permission_finding(principal: str, denied: list[str]) -> Finding:
    if not denied:
        return Finding("permissions", Status.OK,
                       f"{principal} is allowed every action of {PERMISSIONS_DOC}.")
    shown = ", ".join(denied[:12]) + (f" and {len(denied) - 12} more" if len(denied) > 12
                                      else "")
    return Finding("permissions", Status.FAIL, f"{principal} is not allowed: {shown}.",
                   f"Attach the policy of {PERMISSIONS_DOC} to {principal}.")


def access_entry_finding(cluster: str, principal: str, has_entry: bool,
                         auth_mode: str | None) -> Finding:
    if has_entry:
        return Finding("access_entry", Status.OK,
                       f"EKS cluster {cluster} has an access entry for {principal}.")
    if auth_mode == "CONFIG_MAP":
        return Finding("access_entry", Status.FAIL,
                       f"EKS cluster {cluster} uses CONFIG_MAP authentication only; HyperPod "
                       "needs API or API_AND_CONFIG_MAP.",
                       f"aws eks update-cluster-config --name {cluster} --access-config "
                       "authenticationMode=API_AND_CONFIG_MAP")
    return Finding("access_entry", Status.FAIL,
                   f"EKS cluster {cluster} has no access entry for {principal}: Kubernetes "
                   "will answer 401.",
                   f"aws eks create-access-entry --cluster-name {cluster} --principal-arn "
                   f"{principal}; then aws eks associate-access-policy --cluster-name "
                   f"{cluster} --principal-arn {principal} --policy-arn arn:aws:eks::aws:"
                   "cluster-access-policy/AmazonEKSClusterAdminPolicy --access-scope "
                   "type=cluster")
