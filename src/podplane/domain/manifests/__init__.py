"""Kubernetes manifests podplane renders itself (pure functions -> dicts; no Helm at run time).

`for_unit(name, version, cluster)` returns the objects of one dependency unit; every object is
labelled with the unit and annotated with its version, so the installed version can be read back.
"""

from __future__ import annotations

from podplane.domain.manifests.common import VERSION_ANNOTATION, Manifest, unit_labels
from podplane.domain.manifests.device_plugins import efa_device_plugin, nvidia_device_plugin
from podplane.domain.manifests.health import deep_health_check, health_monitoring_agent
from podplane.domain.manifests.storage import s3_volume

RENDERERS = {
    "nvidia-device-plugin": nvidia_device_plugin,
    "aws-efa-k8s-device-plugin": efa_device_plugin,
    "hyperpod-health-monitoring-agent": health_monitoring_agent,
    "hyperpod-deep-health-check": deep_health_check,
}


def for_unit(name: str, version: str) -> list[Manifest]:
    render = RENDERERS.get(name)
    if render is None:
        raise KeyError(f"no manifest renderer for unit {name!r}")
    return render(version)


__all__ = ["RENDERERS", "VERSION_ANNOTATION", "Manifest", "for_unit", "s3_volume",
           "unit_labels"]
