"""One renderer for every workload: a recipe's or your own container (workloads.py) + a
request + the cluster's facts -> the job's manifest (HyperPodPyTorchJob, Kubeflow PyTorchJob
or KubeRay RayJob).

The shared data contract (docs/training.md): the cluster's S3 bucket, mounted through its
Mountpoint for S3 claim (`domain.manifests.storage.CLAIM`), appears at the same paths in every
job: /data and /models (shared), /checkpoints and /outputs (the job's own prefix,
`checkpoints/<job>/` and `outputs/<job>/` in the bucket, by subPath).

Health-gated placement: every pod requires a node of the chosen instance group whose HyperPod
health label is `Schedulable` (AWS docs, "node labels": "use it in node selectors so workloads
land only on healthy nodes"; the same affinity as AWS's reference job,
awslabs/awsome-distributed-training 3.test_cases/pytorch/FSDP/kubernetes/*-hpto.yaml).
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, replace
from typing import Any

from podplane.domain.features.mlflow import SERVICE_ACCOUNT as MLFLOW_ACCOUNT
from podplane.domain.features.mlflow import job_env as mlflow_env
from podplane.domain.jobs import scripts
from podplane.domain.jobs.kinds import (
    GROUP_LABEL,
    HEALTH_LABEL,
    HYPERPOD,
    KUBEFLOW,
    MANAGED_BY,
    NAMESPACE,
    RAY,
    RECIPE_LABEL,
)
from podplane.domain.jobs.recipes import Recipe
from podplane.domain.jobs.requests import JobRequest
from podplane.domain.jobs.workloads import Workload, workload_of
from podplane.domain.manifests.storage import CLAIM

Manifest = dict[str, Any]
GPU, EFA = "nvidia.com/gpu", "vpc.amazonaws.com/efa"
PARAMS_ANNOTATION = "podplane.io/params"
FSX_VOLUME, FSX_PATH = "fsx", "/fsx"
MOUNTS = {"/data": "data", "/models": "models", "/checkpoints": "checkpoints/{job}",
          "/outputs": "outputs/{job}"}
SHARED_VOLUME = "shared"
CONTAINER = "pytorch"  # Kubeflow's PyTorchJob requires this name; HyperPod accepts any


@dataclass(frozen=True)
class Placement:
    """What the renderer needs from the cluster (read by the service, checked in the plan)."""

    instance_group: str
    replicas: int
    gpus_per_replica: int
    efa_per_replica: int
    bucket: str | None
    fsx_claim: str | None = None  # the fsx-lustre feature's claim, mounted at /fsx when set
    mlflow_arn: str | None = None  # the mlflow feature's tracking server (logged to when set)


@dataclass(frozen=True)
class Facts:
    """The cluster's stable facts a submission stores beside its request (as JSON) and
    renders from, so a resumed or replayed operation applies what its plan showed."""

    gpus_per_node: int
    efa_per_node: int
    bucket: str | None = None
    fsx_claim: str | None = None
    mlflow_arn: str | None = None


def prefixes(bucket: str | None, job: str) -> dict[str, str | None]:
    """Where a job's checkpoints and outputs land in the cluster's bucket."""
    return {kind: f"s3://{bucket}/{kind}/{job}/" if bucket else None
            for kind in ("checkpoints", "outputs")}


def render(work: Workload, job: str, where: Placement, max_restarts: int,
           elastic: bool) -> Manifest:
    template = _pod_template(work, job, where)
    labels = {MANAGED_BY: "podplane", **_recipe_label(work)}
    meta: Manifest = {"name": job, "namespace": NAMESPACE, "labels": labels}
    if work.recipe:
        meta["annotations"] = {PARAMS_ANNOTATION: json.dumps(work.params, sort_keys=True)}
    nproc = str(max(where.gpus_per_replica, 1))
    if work.kind == RAY.kind:  # KubeRay RayJob: a CPU head and the GPU workers (ray.py)
        from podplane.domain.jobs import ray

        head = _pod_template(work, job, replace(where, gpus_per_replica=0, efa_per_replica=0))
        return ray.manifest(work, meta, head, template, where.replicas,
                            _argv(work, job, where), max_restarts)
    if work.kind == HYPERPOD.kind:
        spec: Manifest = {
            "nprocPerNode": nproc,
            "runPolicy": {"jobMaxRetryCount": max_restarts, "cleanPodPolicy": "None",
                          **_log_monitoring(work)},
            "replicaSpecs": [{"name": "pod", "replicas": where.replicas,
                              "template": template}]}
        if elastic:
            spec["elasticPolicy"] = {"minReplicas": 1, "maxReplicas": where.replicas}
        return {"apiVersion": HYPERPOD.api_version, "kind": HYPERPOD.kind, "metadata": meta,
                "spec": spec}
    replica_specs = {"Master": {"replicas": 1, "restartPolicy": "OnFailure",
                                "template": template}}
    if where.replicas > 1:
        replica_specs["Worker"] = {"replicas": where.replicas - 1,
                                   "restartPolicy": "OnFailure", "template": template}
    kf_spec: Manifest = {"nprocPerNode": nproc, "pytorchReplicaSpecs": replica_specs,
                         "runPolicy": {"backoffLimit": max_restarts, "cleanPodPolicy": "None"}}
    if elastic:
        kf_spec["elasticPolicy"] = {"minReplicas": 1, "maxReplicas": where.replicas,
                                    "rdzvBackend": "c10d", "maxRestarts": max_restarts}
    return {"apiVersion": KUBEFLOW.api_version, "kind": KUBEFLOW.kind, "metadata": meta,
            "spec": kf_spec}


def _recipe_label(work: Workload) -> dict[str, str]:
    return {RECIPE_LABEL: work.recipe.name} if work.recipe else {}


def _log_monitoring(work: Workload) -> Manifest:
    """The operator's hang and start watch on the recipe's progress line. Your own workload's
    log lines are unknown: a JobStart pattern they never match would fail a healthy job after
    its cut-off (FIELDS.md logMonitoringConfiguration), so none is set for it."""
    if work.recipe is None:
        return {}
    pattern = work.recipe.progress_pattern
    return {"logMonitoringConfiguration": [
        {"name": "JobStart", "logPattern": pattern, "expectedStartCutOffInSeconds": 600},
        {"name": "JobHangingDetection", "logPattern": pattern,
         "expectedRecurringFrequencyInSeconds": 900}]}


def _command(work: Workload, job: str, where: Placement) -> Manifest:
    """The container's `command` and `args` as Kubernetes has them (both replace the image's
    ENTRYPOINT and CMD: Kubernetes docs, "Define a Command and Arguments for a Container")."""
    if work.container is not None and work.container.args:
        return {"command": list(work.container.command), "args": list(work.container.args)}
    return {"command": _argv(work, job, where)}


def _argv(work: Workload, job: str, where: Placement) -> list[str]:
    """What the container runs: your own command and args as given, or the recipe's."""
    if work.container is not None:
        return [*work.container.command, *work.container.args]
    assert work.recipe is not None
    return [*launcher_prefix(work.recipe), *command(work.recipe, job, work.params, where)]


def command(recipe: Recipe, job: str, params: dict[str, Any], where: Placement) -> list[str]:
    """The entrypoint with its values; a recipe that installs packages first runs `sh -c "pip
    install --quiet <pins> && exec <entrypoint>"` (every word quoted for the shell; parameter
    values are already restricted to `[A-Za-z0-9._/-]`, recipes.py)."""
    values = {**{k: _text(v) for k, v in params.items()}, "nnodes": str(where.replicas),
              "nproc": str(max(where.gpus_per_replica, 1)), "job": job,
              "outputs": "/outputs", "checkpoints": "/checkpoints",
              "scripts": scripts.SCRIPTS_DIR}
    words = [part.format(**values) for part in recipe.entrypoint]
    if not recipe.install:
        return words
    return ["sh", "-c", f"pip install --quiet {shlex.join(recipe.install)} && "
            f"exec {shlex.join(words)}"]


def launcher_env(recipe: Recipe, where: Placement) -> list[Manifest]:
    """What the recipe's CLI reads to launch torchrun across the job's nodes; Kubeflow's
    operator sets MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE and PET_* (training-operator
    pkg/controller.v1/pytorch/envvar.go), which these CLIs do not read:
    - llamafactory-cli trains in one process unless FORCE_TORCHRUN (or more than one GPU), then
      passes torchrun `--nnodes $NNODES --node_rank $NODE_RANK --nproc_per_node
      $NPROC_PER_NODE` itself (defaults 1, 0, the GPUs) (hiyouga/LLaMA-Factory
      src/llamafactory/launcher.py `launch`);
    - swift runs torchrun only when NPROC_PER_NODE or NNODES is set, passing those that are;
      torchrun reads the node rank from PET_NODE_RANK (modelscope/ms-swift swift/cli/main.py
      `use_torchrun`, `get_torchrun_args`; pytorch torch/distributed/argparse_util.py `env`)."""
    if recipe.kind != KUBEFLOW.kind or recipe.framework not in ("llama-factory", "ms-swift"):
        return []
    env = [{"name": "NNODES", "value": str(where.replicas)},
           {"name": "NPROC_PER_NODE", "value": str(max(where.gpus_per_replica, 1))}]
    if recipe.framework == "llama-factory":
        env.insert(0, {"name": "FORCE_TORCHRUN", "value": "1"})
    return env


def launcher_prefix(recipe: Recipe) -> list[str]:
    """llamafactory-cli's NODE_RANK differs per pod: it is Kubeflow's RANK (Master 0, Worker i
    is i+1), set after the template's env, so an env entry cannot refer to it (the kubelet
    expands `$(VAR)` in env only from the entries before it), while `command` expands from the
    whole environment (Kubernetes docs, "Define a Command and Arguments for a Container")."""
    wanted = recipe.kind == KUBEFLOW.kind and recipe.framework == "llama-factory"
    return ["env", "NODE_RANK=$(RANK)"] if wanted else []


def _text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def _env(work: Workload, job: str, where: Placement) -> list[Manifest]:
    """podplane's variables (the MLflow feature's too), then the recipe launcher's, or yours:
    a name you set replaces podplane's, so each name appears once (e.g. NCCL_DEBUG=WARN)."""
    env = [{"name": "PODPLANE_JOB", "value": job}]
    if work.recipe:
        env.append({"name": "PODPLANE_RECIPE", "value": work.recipe.name})
    env += [{"name": "CHECKPOINT_DIR", "value": "/checkpoints"},
            {"name": "OUTPUT_DIR", "value": "/outputs"},
            {"name": "NCCL_DEBUG", "value": "INFO"}]
    if where.mlflow_arn:  # the run logs to MLflow as the feature's identity (features.md)
        env += mlflow_env(where.mlflow_arn, job)
    if work.container is None:
        assert work.recipe is not None
        return env + launcher_env(work.recipe, where)
    yours = work.container.env
    return [e for e in env if e["name"] not in yours] + [
        {"name": k, "value": v} for k, v in yours.items()]


def _pod_template(work: Workload, job: str, where: Placement) -> Manifest:
    limits: dict[str, Any] = {}
    if where.gpus_per_replica:
        limits[GPU] = where.gpus_per_replica
    if where.efa_per_replica and work.resources.efa:
        limits[EFA] = where.efa_per_replica
    requests = {"cpu": work.resources.cpu, "memory": work.resources.memory, **limits}
    env = _env(work, job, where)
    volumes: list[Manifest] = [{"name": "shm", "emptyDir": {"medium": "Memory"}}]
    mounts: list[Manifest] = [{"name": "shm", "mountPath": "/dev/shm"}]
    if where.bucket:
        volumes.append({"name": SHARED_VOLUME, "persistentVolumeClaim": {"claimName": CLAIM}})
        mounts += [{"name": SHARED_VOLUME, "mountPath": path, "subPath": sub.format(job=job)}
                   for path, sub in MOUNTS.items()]
    if work.scripts:  # podplane's training scripts, from the job's ConfigMap (scripts.py)
        volumes.append(scripts.volume(job))
        mounts.append(scripts.mount())
    if where.fsx_claim:  # one Lustre file system shared by every job (docs/features.md)
        volumes.append({"name": FSX_VOLUME, "persistentVolumeClaim": {
            "claimName": where.fsx_claim}})
        mounts.append({"name": FSX_VOLUME, "mountPath": FSX_PATH})
    container = {"name": CONTAINER, "image": work.image, **_command(work, job, where),
                 "env": env, "resources": {"requests": requests, "limits": limits},
                 "volumeMounts": mounts}
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": HEALTH_LABEL, "operator": "In", "values": ["Schedulable"]},
            {"key": GROUP_LABEL, "operator": "In", "values": [where.instance_group]}]}]}}}
    spec: Manifest = {"containers": [container], "volumes": volumes, "affinity": affinity}
    if where.mlflow_arn:  # its role may log to the tracking server (features.md)
        spec["serviceAccountName"] = MLFLOW_ACCOUNT
    return {"metadata": {"labels": {MANAGED_BY: "podplane", **_recipe_label(work)}},
            "spec": spec}


def manifest_from(request: JobRequest, facts: Facts) -> Manifest:
    """The manifest an operation applies, from what it stored: the request as sent and the
    cluster's stable facts (bucket, GPUs and EFA per node). Pure."""
    work = workload_of(request)
    replicas = request.replicas or work.default_replicas
    gpus = request.gpus_per_replica
    where = Placement(request.instance_group, replicas,
                      facts.gpus_per_node if gpus is None else gpus, facts.efa_per_node,
                      facts.bucket, facts.fsx_claim, facts.mlflow_arn)
    return render(work, request.name, where, request.max_restarts, request.elastic)
