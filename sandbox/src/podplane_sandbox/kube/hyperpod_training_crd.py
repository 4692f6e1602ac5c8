"""The HyperPodPyTorchJob CRD the HyperPod training operator add-on installs.

AWS publishes no CRD YAML for it. This schema is written here from the field facts of the
official SDK's model (aws/sagemaker-hyperpod-cli, `hyperpod_pytorch_job_unified_config.py`:
group sagemaker.amazonaws.com, version v1, kind HyperPodPyTorchJob, plural hyperpodpytorchjobs,
namespaced; spec.nprocPerNode / replicaSpecs / runPolicy / elasticPolicy). Pod templates and
status are kept open (preserve-unknown-fields): the API server prunes nothing the SDK sends.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]
GROUP, VERSION, KIND, PLURAL = "sagemaker.amazonaws.com", "v1", "HyperPodPyTorchJob", \
    "hyperpodpytorchjobs"


def _ints(*names: str) -> Obj:
    return {n: {"type": "integer"} for n in names}


def _open() -> Obj:
    return {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


REPLICA_SPEC: Obj = {
    "type": "object", "required": ["name"],
    "properties": {"name": {"type": "string"},
                   "replicas": {"type": "integer", "minimum": 0},
                   "maxReplicas": {"type": "integer", "minimum": 0},
                   "spares": {"type": "integer", "minimum": 0},
                   "template": _open()}}

LOG_RULE: Obj = {
    "type": "object", "required": ["name", "logPattern"],
    "properties": {"name": {"type": "string"}, "logPattern": {"type": "string"},
                   "stopPattern": {"type": "string"},
                   "operator": {"type": "string", "enum": ["gt", "lt", "eq", "gteq", "lteq"]},
                   **_ints("expectedStartCutOffInSeconds", "expectedRecurringFrequencyInSeconds",
                           "metricThreshold", "metricEvaluationDataPoints")}}

RESTART_POLICY: Obj = {
    "type": "object", "required": ["evalPeriodSeconds"],
    "properties": _ints("evalPeriodSeconds", "maxFullJobRestarts",
                        "numRestartBeforeFullJobRestart", "maxNumRepeatOffendersToAvoid",
                        "scaleUpSnoozeTimeInSeconds")}

RUN_POLICY: Obj = {
    "type": "object",
    "properties": {"cleanPodPolicy": {"type": "string"}, "suspend": {"type": "boolean"},
                   "workloadMode": {"type": "string"},
                   "logMonitoringConfiguration": {"type": "array", "items": LOG_RULE},
                   "restartPolicy": RESTART_POLICY,
                   "activeDeadlineSeconds": {"type": "integer", "minimum": 1},
                   **_ints("faultDeadlineSeconds", "jobMaxRetryCount", "startupDeadlineSeconds",
                           "ttlSecondsAfterFinished")}}

ELASTIC_POLICY: Obj = {
    "type": "object",
    "properties": {"replicaDiscreteValues": {"type": "array", "items": {"type": "integer"}},
                   **_ints("minReplicas", "maxReplicas", "replicaIncrementStep",
                           "scalingTimeoutInSeconds", "gracefulShutdownTimeoutInSeconds",
                           "faultyScaleDownTimeoutInSeconds")}}

SPEC: Obj = {
    "type": "object",
    "properties": {"nprocPerNode": {"type": "string"},
                   "replicaSpecs": {"type": "array", "items": REPLICA_SPEC},
                   "runPolicy": RUN_POLICY, "elasticPolicy": ELASTIC_POLICY}}


def hyperpod_pytorchjob_crd() -> Obj:
    schema = {"type": "object",
              "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                             "metadata": {"type": "object"}, "spec": SPEC,
                             "status": _open()}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{PLURAL}.{GROUP}"},
        "spec": {"group": GROUP, "scope": "Namespaced",
                 "names": {"plural": PLURAL, "singular": "hyperpodpytorchjob", "kind": KIND,
                           "listKind": f"{KIND}List"},
                 "versions": [{"name": VERSION, "served": True, "storage": True,
                               "subresources": {"status": {}},
                               "schema": {"openAPIV3Schema": schema},
                               "additionalPrinterColumns": [
                                   {"name": "Age", "type": "date",
                                    "jsonPath": ".metadata.creationTimestamp"}]}]},
    }
