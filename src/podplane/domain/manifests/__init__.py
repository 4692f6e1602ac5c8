"""Kubernetes manifests podplane renders itself (pure functions -> dicts; no Helm at run time).

`for_unit(name, version, region)` returns the objects of one dependency unit; every object is
labelled with the unit and annotated with its version, so the installed version can be read back.
The HyperPod units follow the HyperPod dependencies chart (aws/sagemaker-hyperpod-cli @ 011ca927,
`helm_chart/HyperPodHelmChart`, chart 0.1.0); see docs/architecture.md. That includes the
chart's Kubeflow training-operators and mpi-operator (kubeflow): their Deployments, RBAC and
Service as the chart has them, and compact structural CRDs for PyTorchJob, TFJob, MXJob,
XGBoostJob, PaddleJob and MPIJob instead of the chart's generated ones (kubeflow_crds;
docs/adr/0006-kubeflow-crds.md). HyperPod's own training operator (HyperPodPyTorchJob) is an
EKS add-on, not rendered here.
"""

from __future__ import annotations

from collections.abc import Callable

from podplane.domain.manifests.common import VERSION_ANNOTATION, Manifest, unit_labels
from podplane.domain.manifests.device_plugins import (
    efa_device_plugin,
    neuron_device_plugin,
    nvidia_device_plugin,
)
from podplane.domain.manifests.health import deep_health_check, health_monitoring_agent
from podplane.domain.manifests.kubeflow import mpi_operator, training_operators
from podplane.domain.manifests.service_roles import hyperpod_patching, job_auto_restart
from podplane.domain.manifests.storage import s3_volume

RENDERERS: dict[str, Callable[[str, str], list[Manifest]]] = {
    "nvidia-device-plugin": nvidia_device_plugin,
    "aws-efa-k8s-device-plugin": efa_device_plugin,
    "neuron-device-plugin": neuron_device_plugin,
    "hyperpod-health-monitoring-agent": health_monitoring_agent,
    "hyperpod-deep-health-check": deep_health_check,
    "hyperpod-job-auto-restart": job_auto_restart,
    "hyperpod-patching": hyperpod_patching,
    "kubeflow-training-operator": training_operators,
    "mpi-operator": mpi_operator,
}


def for_unit(name: str, version: str, region: str) -> list[Manifest]:
    render = RENDERERS.get(name)
    if render is None:
        raise KeyError(f"no manifest renderer for unit {name!r}")
    return render(version, region)


__all__ = ["RENDERERS", "VERSION_ANNOTATION", "Manifest", "for_unit", "s3_volume",
           "unit_labels"]
