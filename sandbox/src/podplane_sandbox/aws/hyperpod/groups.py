"""Instance-group rules: which fields UpdateCluster may change, and the group's echo in Describe."""

from __future__ import annotations

from typing import Any

from podplane_sandbox.aws.errors import sm_validation
from podplane_sandbox.aws.hyperpod.rules import check_deep_health_checks

# fields AWS refuses to change on an existing instance group
IMMUTABLE = ("InstanceType", "ThreadsPerCore", "OverrideVpcConfig", "TrainingPlanArn",
             "NetworkInterface", "CapacityRequirements", "InstanceRequirements")
# spec fields echoed back by DescribeCluster
ECHO = ("InstanceGroupName", "InstanceType", "LifeCycleConfig", "ExecutionRole", "ThreadsPerCore",
        "InstanceStorageConfigs", "OnStartDeepHealthChecks", "TrainingPlanArn",
        "OverrideVpcConfig", "ScheduledUpdateConfig", "CapacityRequirements")
# The AMI HyperPod picks for `ImageId` absent or "default" (the latest HyperPod public AMI);
# DescribeCluster reports it as each group's CurrentImageId / DesiredImageId.
DEFAULT_AMI = "ami-0f3c9a1b2d4e5f607"


def new_group(spec: dict[str, Any]) -> dict[str, Any]:
    if not spec.get("InstanceType"):
        raise sm_validation(f"InstanceType is required for instance group "
                            f"{spec['InstanceGroupName']}.")
    uri = spec.get("LifeCycleConfig", {}).get("SourceS3Uri")
    if not spec.get("LifeCycleConfig") or not uri:
        raise sm_validation(f"LifeCycleConfig.SourceS3Uri is required for instance group "
                            f"{spec['InstanceGroupName']}.")
    check_deep_health_checks(spec)
    group = {k: spec[k] for k in ECHO if k in spec}
    group["CurrentImageId"] = group["DesiredImageId"] = _image(spec.get("ImageId"))
    group.setdefault("ThreadsPerCore", 2 if spec["InstanceType"].startswith("ml.p") else 1)
    group.update(TargetCount=spec["InstanceCount"], CurrentCount=0, Status="Creating",
                 InstanceTypeDetails=[], _spec=spec)
    if "MinInstanceCount" in spec:
        group["MinCount"] = spec["MinInstanceCount"]
    if spec.get("NetworkInterface"):
        group["NetworkInterface"] = spec["NetworkInterface"]
    if spec.get("KubernetesConfig"):
        group["KubernetesConfig"] = _kubernetes(spec["KubernetesConfig"])
    return group


def _kubernetes(config: dict[str, Any]) -> dict[str, Any]:
    """The group's labels and taints as DescribeCluster shows them (applied at once here)."""
    labels, taints = config.get("Labels", {}), config.get("Taints", [])
    return {"CurrentLabels": labels, "DesiredLabels": labels,
            "CurrentTaints": taints, "DesiredTaints": taints}


def _image(image_id: str | None) -> str:
    return DEFAULT_AMI if image_id in (None, "default") else str(image_id)


def check_update(group: dict[str, Any], spec: dict[str, Any]) -> None:
    old = group["_spec"]
    check_deep_health_checks({**old, **spec})
    for field in IMMUTABLE:
        if field in spec and spec[field] != old.get(field):
            raise sm_validation(f"{field} of instance group {group['InstanceGroupName']} cannot "
                                f"be updated. Create a new instance group instead.")


def apply_update(group: dict[str, Any], spec: dict[str, Any]) -> None:
    group["_spec"] = {**group["_spec"], **spec}
    for key in ("LifeCycleConfig", "ExecutionRole", "InstanceStorageConfigs",
                "OnStartDeepHealthChecks", "ScheduledUpdateConfig"):
        if key in spec:
            group[key] = spec[key]
    if "ImageId" in spec:  # pins the group to that AMI from now on
        group["CurrentImageId"] = group["DesiredImageId"] = _image(spec["ImageId"])
    # UpdateCluster replaces a group's specification: what the request leaves out is gone
    # (labels, taints, minimum count), as with every other field of the group.
    if "KubernetesConfig" in spec or "KubernetesConfig" in group:
        group["KubernetesConfig"] = _kubernetes(spec.get("KubernetesConfig") or {})
    group["TargetCount"] = spec["InstanceCount"]
    group.pop("MinCount", None)
    if "MinInstanceCount" in spec:
        group["MinCount"] = spec["MinInstanceCount"]
