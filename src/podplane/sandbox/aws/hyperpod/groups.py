"""Instance-group rules: which fields UpdateCluster may change, and the group's echo in Describe."""

from __future__ import annotations

from typing import Any

from podplane.sandbox.aws.errors import sm_validation
from podplane.sandbox.aws.protocol import service_model

# fields AWS refuses to change on an existing instance group
IMMUTABLE = ("InstanceType", "ThreadsPerCore", "OverrideVpcConfig", "TrainingPlanArn",
             "NetworkInterface", "CapacityRequirements", "InstanceRequirements")
# spec fields echoed back by DescribeCluster
ECHO = ("InstanceGroupName", "InstanceType", "LifeCycleConfig", "ExecutionRole", "ThreadsPerCore",
        "InstanceStorageConfigs", "OnStartDeepHealthChecks", "TrainingPlanArn",
        "OverrideVpcConfig", "ScheduledUpdateConfig", "CapacityRequirements")


def new_group(spec: dict[str, Any]) -> dict[str, Any]:
    if not spec.get("InstanceType"):
        raise sm_validation(f"InstanceType is required for instance group "
                            f"{spec['InstanceGroupName']}.")
    allowed = service_model("sagemaker").shape_for("ClusterInstanceType").enum
    if spec["InstanceType"] not in allowed:
        raise sm_validation(f"1 validation error detected: Value '{spec['InstanceType']}' at "
                            "'instanceGroups.1.member.instanceType' failed to satisfy "
                            "constraint: Member must satisfy enum value set")
    uri = spec.get("LifeCycleConfig", {}).get("SourceS3Uri")
    if not spec.get("LifeCycleConfig") or not uri:
        raise sm_validation(f"LifeCycleConfig.SourceS3Uri is required for instance group "
                            f"{spec['InstanceGroupName']}.")
    if not uri.startswith("s3://"):
        raise sm_validation(f"1 validation error detected: Value '{uri}' at "
                            "'lifeCycleConfig.sourceS3Uri' failed to satisfy constraint: "
                            "Member must satisfy regular expression pattern: ^(https|s3)://.*")
    group = {k: spec[k] for k in ECHO if k in spec}
    group.setdefault("ThreadsPerCore", 2 if spec["InstanceType"].startswith("ml.p") else 1)
    group.update(TargetCount=spec["InstanceCount"], CurrentCount=0, Status="Creating",
                 InstanceTypeDetails=[], _spec=spec)
    if "MinInstanceCount" in spec:
        group["MinCount"] = spec["MinInstanceCount"]
    if spec.get("NetworkInterface"):
        group["NetworkInterface"] = spec["NetworkInterface"]
    if spec.get("KubernetesConfig"):
        kc = spec["KubernetesConfig"]
        group["KubernetesConfig"] = {"CurrentLabels": kc.get("Labels", {}),
                                     "DesiredLabels": kc.get("Labels", {}),
                                     "CurrentTaints": kc.get("Taints", []),
                                     "DesiredTaints": kc.get("Taints", [])}
    return group


def check_update(group: dict[str, Any], spec: dict[str, Any]) -> None:
    old = group["_spec"]
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
    group["TargetCount"] = spec["InstanceCount"]
    if "MinInstanceCount" in spec:
        group["MinCount"] = spec["MinInstanceCount"]
