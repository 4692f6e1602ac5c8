"""The training code a recipe runs, shipped with podplane (`src/podplane/training_scripts/`)
and handed to its job as a ConfigMap mounted read-only at SCRIPTS_DIR in every pod.

- The ConfigMap is applied before the job: the kubelet does not start a pod whose ConfigMap
  volume does not exist, it keeps it ContainerCreating with `FailedMount` events (Kubernetes
  docs, "ConfigMaps": "the Pod won't start until the ConfigMap exists").
- Once the job exists the ConfigMap names it as its owner, so deleting the job by any means
  deletes it too (Kubernetes docs, "Owners and Dependents": the garbage collector deletes
  dependents whose owners are gone); job.delete also deletes it itself.
- A ConfigMap holds at most 1 MiB (Kubernetes docs, "ConfigMaps"); the scripts are a few KiB.
"""

from __future__ import annotations

from typing import Any

from podplane.domain.jobs.kinds import MANAGED_BY, NAMESPACE, RECIPE_LABEL

Manifest = dict[str, Any]
SCRIPTS_DIR = "/opt/podplane/scripts"
VOLUME = "training-scripts"
JOB_LABEL = "podplane.io/job"
READ_ONLY = 0o444
MAX_BYTES = 1024 * 1024


def config_map_name(job: str) -> str:
    return f"{job}-scripts"


def config_map(job: str, recipe: str, files: dict[str, str],
               owner: Manifest | None = None) -> Manifest:
    """The job's scripts ConfigMap; `owner` (the applied job) makes it the job's dependent."""
    size = sum(len(text.encode()) for text in files.values())
    if size > MAX_BYTES:
        raise ValueError(f"training scripts of {recipe} are {size} bytes, over a ConfigMap's "
                         "1 MiB")
    meta: Manifest = {"name": config_map_name(job), "namespace": NAMESPACE,
                      "labels": {MANAGED_BY: "podplane", RECIPE_LABEL: recipe, JOB_LABEL: job}}
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": owner["apiVersion"], "kind": owner["kind"],
                                    "name": owner["metadata"]["name"],
                                    "uid": owner["metadata"]["uid"]}]
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": dict(files)}


def volume(job: str) -> Manifest:
    return {"name": VOLUME, "configMap": {"name": config_map_name(job),
                                          "defaultMode": READ_ONLY}}


def mount() -> Manifest:
    return {"name": VOLUME, "mountPath": SCRIPTS_DIR, "readOnly": True}
