"""Compact structural CRDs for the Kubeflow training jobs (docs/adr/0006-kubeflow-crds.md).

The HyperPod dependencies chart (aws/sagemaker-hyperpod-cli @ 011ca927, chart 0.1.0) ships the
upstream generated CRDs: `charts/training-operators/crds/*.yaml` (PyTorchJob, TFJob, MXJob,
XGBoostJob, PaddleJob; kubeflow.org/v1) and `charts/mpi-operator/templates/mpijob-crd.yaml`
(MPIJob, kubeflow.org/v2beta1). Each spells out the whole PodTemplateSpec (~0.5 MB apiece).
These keep the same identity (group, names, scope, versions, subresources, printer columns)
and type the fields the operators document; pod templates are left open
(`x-kubernetes-preserve-unknown-fields`, Kubernetes docs "Specifying a structural schema",
"Controlling pruning") for the kubelet and admission to check as for any pod.
"""

from __future__ import annotations

import copy
from typing import Any

from podplane.domain.manifests.common import Manifest, meta

Obj = dict[str, Any]
GROUP = "kubeflow.org"
# The chart's training-operator CRDs all print the last condition and the age.
JOB_COLUMNS = [{"name": "State", "type": "string", "jsonPath": ".status.conditions[-1:].type"},
               {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]


def _int(fmt: str = "int32") -> Obj:
    return {"type": "integer", "format": fmt}


def _str() -> Obj:
    return {"type": "string"}


def _bool(default: bool | None = None) -> Obj:
    return {"type": "boolean", **({} if default is None else {"default": default})}


def _open() -> Obj:
    return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


def _object(**props: Obj) -> Obj:
    return {"type": "object", "properties": props}


# A resource quantity ("2", "8Gi" or 2): the int-or-string form the API server allows.
QUANTITY: Obj = {"anyOf": [{"type": "integer"}, {"type": "string"}],
                 "x-kubernetes-int-or-string": True}

# RunPolicy, common to every job kind (training-operator `pkg/apis/kubeflow.org/v1/common_types`).
RUN_POLICY = _object(
    activeDeadlineSeconds=_int("int64"), backoffLimit=_int(), cleanPodPolicy=_str(),
    suspend=_bool(default=False), ttlSecondsAfterFinished=_int(),
    schedulingPolicy=_object(minAvailable=_int(), priorityClass=_str(), queue=_str(),
                             scheduleTimeoutSeconds=_int(),
                             minResources={"type": "object", "additionalProperties": QUANTITY}))

# The replica specs map: role name (Master, Worker, Launcher...) -> replicas, restart policy and
# the pod template (left open).
REPLICA_SPECS: Obj = {"type": "object", "additionalProperties": _object(
    replicas=_int(), restartPolicy=_str(), template=_open())}

METRICS: Obj = {"type": "array", "items": _open()}  # HPA metric specs (autoscaling/v2)

PYTORCH_ELASTIC = _object(
    minReplicas=_int(), maxReplicas=_int(), maxRestarts=_int(), nProcPerNode=_int(),
    rdzvBackend=_str(), rdzvHost=_str(), rdzvId=_str(), rdzvPort=_int(), standalone=_bool(),
    rdzvConf={"type": "array", "items": _object(key=_str(), value=_str())}, metrics=METRICS)

STATUS: Obj = {**_open(), "properties": {
    "conditions": {"type": "array", "items": {**_object(
        type=_str(), status=_str(), reason=_str(), message=_str(),
        lastUpdateTime={"type": "string", "format": "date-time"},
        lastTransitionTime={"type": "string", "format": "date-time"}),
        "required": ["type", "status"]}},
    "startTime": {"type": "string", "format": "date-time"},
    "completionTime": {"type": "string", "format": "date-time"}}}


def _schema(spec_props: Obj, required: list[str]) -> Obj:
    spec = {"type": "object", "properties": spec_props, "required": required}
    return {"type": "object", "properties": {
        "apiVersion": _str(), "kind": _str(), "metadata": {"type": "object"},
        "spec": spec, "status": STATUS}}


def _scale(replicas_field: str) -> Obj:
    """The Worker replicas as the scale subresource (PyTorchJob and PaddleJob upstream)."""
    return {"specReplicasPath": f".spec.{replicas_field}.Worker.replicas",
            "statusReplicasPath": ".status.replicaStatuses.Worker.active",
            "labelSelectorPath": ".status.replicaStatuses.Worker.selector"}


def job_crd(kind: str, version: str, schema: Obj, unit: str, unit_version: str, *,
            columns: list[Obj] | None = None, scale: Obj | None = None) -> Manifest:
    plural = kind.lower() + "s"
    subresources: Obj = {"status": {}, **({"scale": scale} if scale else {})}
    served: Obj = {"name": version, "served": True, "storage": True,
                   "schema": {"openAPIV3Schema": copy.deepcopy(schema)},
                   "subresources": subresources}
    if columns:
        served["additionalPrinterColumns"] = columns
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": meta(f"{plural}.{GROUP}", unit, unit_version),
        "spec": {"group": GROUP, "scope": "Namespaced", "versions": [served],
                 "names": {"kind": kind, "listKind": f"{kind}List", "plural": plural,
                           "singular": kind.lower()}},
    }


def training_crds(unit: str, version: str) -> list[Manifest]:
    """The five kinds the chart's training operator serves (kubeflow.org/v1)."""
    def v1(kind: str, spec: Obj, required: list[str], scale: Obj | None = None) -> Manifest:
        return job_crd(kind, "v1", _schema(spec, required), unit, version,
                       columns=JOB_COLUMNS, scale=scale)

    return [
        v1("PyTorchJob", {"pytorchReplicaSpecs": REPLICA_SPECS, "runPolicy": RUN_POLICY,
                          "elasticPolicy": PYTORCH_ELASTIC, "nprocPerNode": _str()},
           ["pytorchReplicaSpecs"], scale=_scale("pytorchReplicaSpecs")),
        v1("TFJob", {"tfReplicaSpecs": REPLICA_SPECS, "runPolicy": RUN_POLICY,
                     "successPolicy": _str(), "enableDynamicWorker": _bool()},
           ["tfReplicaSpecs"]),
        v1("MXJob", {"mxReplicaSpecs": REPLICA_SPECS, "runPolicy": RUN_POLICY,
                     "jobMode": _str()}, ["jobMode", "mxReplicaSpecs"]),
        v1("XGBoostJob", {"xgbReplicaSpecs": REPLICA_SPECS, "runPolicy": RUN_POLICY},
           ["xgbReplicaSpecs"]),
        v1("PaddleJob", {"paddleReplicaSpecs": REPLICA_SPECS, "runPolicy": RUN_POLICY,
                         "elasticPolicy": _object(minReplicas=_int(), maxReplicas=_int(),
                                                  maxRestarts=_int(), metrics=METRICS)},
           ["paddleReplicaSpecs"], scale=_scale("paddleReplicaSpecs")),
    ]


def mpijob_crd(unit: str, version: str) -> Manifest:
    """MPIJob v2beta1 as mpi-operator 0.5 serves it: Launcher and Worker in mpiReplicaSpecs,
    with the operator's defaults (one slot per worker, OpenMPI, keys in /root/.ssh)."""
    spec = {
        "mpiReplicaSpecs": REPLICA_SPECS, "runPolicy": RUN_POLICY,
        "slotsPerWorker": {**_int(), "default": 1},
        "mpiImplementation": {"type": "string", "enum": ["OpenMPI", "Intel", "MPICH"],
                              "default": "OpenMPI"},
        "launcherCreationPolicy": {"type": "string", "default": "AtStartup"},
        "runLauncherAsWorker": _bool(default=False),
        "sshAuthMountPath": {"type": "string", "default": "/root/.ssh"},
    }
    return job_crd("MPIJob", "v2beta1", _schema(spec, ["mpiReplicaSpecs"]), unit, version)
