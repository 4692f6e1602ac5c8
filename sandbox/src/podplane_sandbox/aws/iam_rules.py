"""IAM as EKS and SageMaker HyperPod see it, read from moto's IAM and S3 backends.

- A role handed to a service must exist and trust that service; HyperPod's execution role must
  also be allowed to read the lifecycle scripts, which must exist.
- Lag mode (World.lag): a role is usable by a service only LAG_SECONDS of virtual time after it
  was created or its trust policy changed. AWS IAM User Guide, "Troubleshoot IAM" / "Changes
  that I make are not always immediately visible": IAM is eventually consistent, and the docs
  tell clients not to put IAM changes in the critical path of creates. Real clients retry for
  it: terraform-provider-aws retries EKS CreateCluster and CreatePodIdentityAssociation on these
  errors (hashicorp/terraform-provider-aws#34717).

Messages are the services' own wording as users report them (see docs/sandbox.md, "IAM and
identity").
"""

from __future__ import annotations

import hashlib
from typing import Any

from moto.backends import get_backend

from podplane_sandbox.aws.errors import eks_invalid_param, sm_validation
from podplane_sandbox.aws.iam_policy import (
    allows,
    as_list,
    entity_documents,
    parse_document,
    wildcard,
)
from podplane_sandbox.aws.world import ACCOUNT, World

LAG_SECONDS = 12.0
LIFECYCLE_FAILED = ("Lifecycle scripts did not run successfully. Ensure the scripts exist in "
                    "provided S3 path, are accessible, and run without errors. Please see "
                    "CloudWatch logs for more details.")
CONTEXT = {"aws:PrincipalAccount": ACCOUNT, "aws:ResourceAccount": ACCOUNT}


# the checks the emulators call ---------------------------------------------------------------
def check_eks_cluster_role(w: World, arn: str) -> None:
    """EKS CreateCluster: the cluster role exists and trusts eks.amazonaws.com."""
    if not _usable(w, arn, "eks.amazonaws.com"):
        raise eks_invalid_param(f"Role with arn: {arn}, could not be assumed because it does "
                                "not exist or the trusted entity is not correct")


def check_pod_identity_role(w: World, arn: str) -> None:
    """EKS Pod Identity: the role exists, and trusts pods.eks.amazonaws.com for AssumeRole and
    TagSession (EKS user guide, "Create IAM role with trust policy required by EKS Pod
    Identity")."""
    if _role(arn) is None or not _propagated(w, arn):
        raise eks_invalid_param("Role provided in the request does not exist")
    if not all(_trusts(arn, "pods.eks.amazonaws.com", a)
               for a in ("sts:AssumeRole", "sts:TagSession")):
        raise eks_invalid_param("Trust policy of the role provided is invalid")


def check_execution_roles(w: World, groups: list[dict[str, Any]]) -> None:
    """HyperPod CreateCluster/UpdateCluster: every group's ExecutionRole exists and trusts
    sagemaker.amazonaws.com (refused synchronously, as SageMaker refuses roles it cannot
    assume)."""
    for arn in sorted({g["ExecutionRole"] for g in groups if g.get("ExecutionRole")}):
        if not _usable(w, arn, "sagemaker.amazonaws.com"):
            raise sm_validation(f"Could not assume role {arn}. Please ensure that the role "
                                "exists and allows principal 'sagemaker.amazonaws.com' to "
                                "assume the role.")


def check_assumable(w: World, arn: str, service: str) -> None:
    """A role a SageMaker service principal assumes (HyperPod's autoscaling ClusterRole):
    it exists and trusts `service`, refused in the wording of check_execution_roles."""
    if not _usable(w, arn, service):
        raise sm_validation(f"Could not assume role {arn}. Please ensure that the role "
                            f"exists and allows principal '{service}' to assume the role.")


def role_allows(arn: str, action: str, resource: str) -> bool:
    """Whether the role's identity policies allow `action` on `resource` (false when the
    role does not exist)."""
    role = _role(arn)
    return role is not None and allows(entity_documents([role]), action, resource, CONTEXT)


def unreadable_lifecycle(groups: list[dict[str, Any]]) -> str | None:
    """The bootstrap failure HyperPod reports when an instance cannot fetch its lifecycle
    scripts: the object is missing, or the execution role may not list the bucket or get the
    object (AWS's reference role grants both, sagemaker-iam-role-stack.yaml)."""
    for g in groups:
        if g.get("LifeCycleConfig") and not _can_read_scripts(g):
            return LIFECYCLE_FAILED
    return None


def fail_added_groups(emulator: Any, cluster: dict[str, Any], added: list[dict[str, Any]],
                      after: float) -> None:
    """UpdateCluster: a new group whose scripts cannot be read loses its instances after the
    scripts would have run; the group shows Degraded and the cluster the failure message."""
    bad = [g for g in added if unreadable_lifecycle([g["_spec"]])]
    now = emulator.w.now()
    for group in bad:
        group["Status"] = "Degraded"
        for n in emulator.nodes(cluster["ClusterName"]).values():
            if n["InstanceGroupName"] == group["InstanceGroupName"]:
                n.update(Status="ShuttingDown", _until=now + after, _replace=False)
        cluster["_fail_msg"] = LIFECYCLE_FAILED


# moto's view ---------------------------------------------------------------------------------
def _iam() -> Any:
    return get_backend("iam")[ACCOUNT]["aws"]


def _role(arn: str) -> Any:
    try:
        return _iam().get_role_by_arn(arn)
    except Exception:  # moto raises its NotFound: the role does not exist
        return None


def _trust_doc(arn: str) -> str:
    role = _role(arn)
    return "" if role is None else str(role.assume_role_policy_document)


def _trusts(arn: str, service: str, action: str = "sts:AssumeRole") -> bool:
    doc = parse_document(_trust_doc(arn))
    for s in as_list(doc.get("Statement")):
        principal = s.get("Principal") if isinstance(s, dict) else None
        services = as_list(principal.get("Service")) if isinstance(principal, dict) else []
        if (s.get("Effect") == "Allow" and service in services
                and any(wildcard(p, action, ignore_case=True)
                        for p in as_list(s.get("Action")))):
            return True
    return False


def _can_read_scripts(group: dict[str, Any]) -> bool:
    config = group["LifeCycleConfig"]
    bucket, _, prefix = config["SourceS3Uri"].removeprefix("s3://").partition("/")
    key = "/".join(p for p in (prefix.strip("/"), config.get("OnCreate", "")) if p)
    role = _role(group.get("ExecutionRole", ""))
    if role is None or not _object_exists(bucket, key):
        return False
    docs = entity_documents([role])
    return (allows(docs, "s3:ListBucket", f"arn:aws:s3:::{bucket}", CONTEXT)
            and allows(docs, "s3:GetObject", f"arn:aws:s3:::{bucket}/{key}", CONTEXT))


def _object_exists(bucket: str, key: str) -> bool:
    try:
        s3 = get_backend("s3")[ACCOUNT]["aws"]
        return s3.get_object(bucket, key) is not None
    except Exception:  # no such bucket
        return False


# propagation (lag mode) ----------------------------------------------------------------------
def _usable(w: World, arn: str, service: str) -> bool:
    propagated = _propagated(w, arn)  # first: it records the trust policy it saw
    return _role(arn) is not None and _trusts(arn, service) and propagated


def _propagated(w: World, arn: str) -> bool:
    if not w.lag:
        return True
    since = _changed_at(w, arn)
    return since is None or w.now() >= since + LAG_SECONDS


def _changed_at(w: World, arn: str) -> float | None:
    """When the role was created or its trust policy last changed, in virtual time (None: before
    the sandbox's ledger began, i.e. long propagated). The ledger names the role a CreateRole
    made but not the one an UpdateAssumeRolePolicy changed, so each check keeps a digest of the
    trust policy it saw: a new digest dates from the latest of those calls since the last check
    (or from now). A role seen for the first time also counts the latest trust change of any
    role after its creation: stricter, and never by more than one lag."""
    seen = w.service_state("iam_rules").setdefault("trust", {})
    digest = hashlib.sha256(_trust_doc(arn).encode()).hexdigest()
    record = seen.get(arn)
    after = record["checked"] if record is not None else None
    created = _latest(w, "CreateRole", arn, after)  # also a role deleted and made again
    since: float | None
    if record is not None and record["digest"] == digest:
        since = created if created is not None else record["since"]
    else:
        changed = _latest(w, "UpdateAssumeRolePolicy", None, after if after else created)
        times = [t for t in (created, changed) if t is not None]
        since = max(times) if times else (w.now() if record is not None else None)
    seen[arn] = {"digest": digest, "since": since, "checked": w.now()}
    return since


def _latest(w: World, action: str, target: str | None,
            after: float | None = None) -> float | None:
    times = [float(e["time"]) for e in w.ledger.query("iam", action)
             if (target is None or e["target"] == target)
             and (after is None or float(e["time"]) >= after)]
    return max(times) if times else None
