"""What a kubelet checks before it can start a pod's containers (pure reads of the store).

- A ConfigMap or Secret volume that does not exist keeps the pod in ContainerCreating with
  `FailedMount` events until it appears (kubelet volume manager; Kubernetes docs "ConfigMaps":
  "the Pod won't start until the ConfigMap exists", unless the reference is `optional`).
- An env var or envFrom that names a missing ConfigMap/Secret (or key) makes the container wait
  with reason `CreateContainerConfigError` (kubelet's kuberuntime; docs "Configure a Pod to Use a
  ConfigMap").
- An image the node cannot pull: `ErrImagePull`, then `ImagePullBackOff` (docs "Images",
  "Image pull back-off"); see images.py for what can be pulled.
"""

from __future__ import annotations

from typing import Any

from podplane_sandbox.kube.controllers.images import pull_error
from podplane_sandbox.kube.store import Store

Obj = dict[str, Any]
KINDS = {"configMap": ("configmaps", "configmap", "name"),
         "secret": ("secrets", "secret", "secretName")}


def missing_volume(pod: Obj, store: Store) -> str | None:
    """kubelet's FailedMount message for the first ConfigMap/Secret volume that is missing."""
    ns = pod["metadata"].get("namespace", "default")
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        projected = (volume.get("projected") or {}).get("sources") or []
        for source_set in [volume, *projected]:
            for field, (rt_key, noun, name_key) in KINDS.items():
                source = source_set.get(field)
                if source is None or source.get("optional"):
                    continue
                # projected sources name the object with `name` for both kinds
                name = source.get(name_key, source.get("name", ""))
                if store.find(rt_key, ns, name) is None:
                    return (f'MountVolume.SetUp failed for volume "{volume.get("name")}" : '
                            f'{noun} "{name}" not found')
    return None


def _containers(pod: Obj) -> list[Obj]:
    spec = pod.get("spec") or {}
    return list(spec.get("initContainers") or []) + list(spec.get("containers") or [])


def config_error(container: Obj, ns: str, store: Store) -> str | None:
    """The CreateContainerConfigError message for one container's env, or None."""
    refs: list[tuple[str, Obj, str | None]] = []
    for env in container.get("env") or []:
        source = env.get("valueFrom") or {}
        for field, kind in (("configMapKeyRef", "configMap"), ("secretKeyRef", "secret")):
            if field in source:
                refs.append((kind, source[field], source[field].get("key")))
    for env_from in container.get("envFrom") or []:
        for field, kind in (("configMapRef", "configMap"), ("secretRef", "secret")):
            if field in env_from:
                refs.append((kind, env_from[field], None))
    for kind, ref, key in refs:
        if ref.get("optional"):
            continue
        rt_key, noun, _ = KINDS[kind]
        found = store.find(rt_key, ns, ref.get("name", ""))
        if found is None:
            return f'{noun} "{ref.get("name", "")}" not found'
        if key is not None and key not in {**(found.get("data") or {}),
                                           **(found.get("binaryData") or {})}:
            label = "ConfigMap" if kind == "configMap" else "Secret"
            return f"couldn't find key {key} in {label} {ns}/{ref.get('name', '')}"
    return None


def first_config_error(pod: Obj, store: Store) -> tuple[str, str] | None:
    ns = pod["metadata"].get("namespace", "default")
    for container in _containers(pod):
        error = config_error(container, ns, store)
        if error:
            return container["name"], error
    return None


def first_pull_error(pod: Obj, node: Obj, network: object) -> tuple[str, str, str] | None:
    """(container, image, error) for the first container whose image cannot be pulled: the
    node has no way to the registry (the AWS side's `pull_blocked`, contracts.NetworkView, when
    `network` offers it; asked at every attempt), or the registry does not have the image."""
    blocked = getattr(network, "pull_blocked", None)
    for container in _containers(pod):
        image = container.get("image", "")
        error = (blocked(node, image) if blocked is not None else None) or pull_error(image)
        if error:
            return container["name"], image, error
    return None
