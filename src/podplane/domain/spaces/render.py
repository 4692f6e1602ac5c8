"""A space as the workspace operator's objects: its Workspace and the Secret holding its token.

Shapes from jupyter-infra/jupyter-k8s api/v1alpha1/workspace_types.go (the operator behind the
`amazon-sagemaker-spaces` add-on; the `hyp` CLI writes the same kind, hyperpod-space-template
v1_1 `to_domain`). The image is SageMaker Distribution (aws/sagemaker-distribution: tags
`<version>-cpu|gpu`, user `sagemaker-user`, `jupyter-lab` on its PATH).

Access: podplane's own route forwards to the Service through the API server's proxy, so
JupyterLab serves under that route (`--ServerApp.base_url`). The kube-apiserver drops the
`Authorization` header once it has authenticated a request (k8s.io/apiserver
pkg/endpoints/filters/authentication.go), so the server's token (`JUPYTER_TOKEN`, read by
Jupyter Server's IdentityProvider) travels as the `token` query parameter podplane adds.
"""

from __future__ import annotations

from typing import Any

from podplane.domain.features import spaces as feature
from podplane.domain.jobs.kinds import GROUP_LABEL, HEALTH_LABEL, MANAGED_BY
from podplane.domain.spaces.requests import SpaceChoice

Manifest = dict[str, Any]
API_VERSION, KIND = "workspace.jupyter.org/v1alpha1", "Workspace"
PORT = 8888                      # jupyter-k8s JupyterPort
HOME = "/home/sagemaker-user"
IMAGE = "public.ecr.aws/sagemaker/sagemaker-distribution:3.2.0-{kind}"
GPU = "nvidia.com/gpu"
TOKEN_KEY = "token"
NAMESPACE, SHARED_CLAIMS = feature.NAMESPACE, feature.SHARED_CLAIMS
GROUP_ANNOTATION = "podplane.io/instance-group"
HOME_ANNOTATION = "podplane.io/home"
SPACE_LABEL = "podplane.io/space"


def home_claim_name(name: str) -> str:
    """podplane's claim for the space's home. Not the operator's `spec.storage` claim, which it
    deletes with the Workspace (jupyter-k8s resource_manager.go EnsurePVCDeleted): a space
    deleted and made again finds its home."""
    return f"space-{name}-home"


def home_claim(name: str, gib: int) -> Manifest:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": home_claim_name(name), "namespace": NAMESPACE,
                         "labels": {MANAGED_BY: "podplane", SPACE_LABEL: name}},
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": feature.HOME_CLASS,
                     "resources": {"requests": {"storage": f"{gib}Gi"}}}}


def base_path(cluster: str, name: str) -> str:
    """The server's base_url: the path its pages and API answer under."""
    return f"/spaces/{cluster}/{name}/"


def console_path(cluster: str, name: str) -> str:
    return f"/clusters/{cluster}/spaces/{name}"


def token_secret(name: str) -> str:
    return f"space-{name}-token"


def secret(name: str, token: str) -> Manifest:
    return {"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": token_secret(name), "namespace": NAMESPACE,
                         "labels": {MANAGED_BY: "podplane"}},
            "stringData": {TOKEN_KEY: token}}


def workspace(cluster: str, request: SpaceChoice) -> Manifest:
    labels = {MANAGED_BY: "podplane"}
    spec: Manifest = {
        "displayName": request.display_name,
        "image": request.image,
        "desiredStatus": "Running",
        # Public: anyone the cluster's RBAC lets list Workspaces sees it (hyp list shows only
        # the caller's own and Public ones); podplane's roles decide who changes it here.
        "ownershipType": "Public", "accessType": "OwnerOnly", "appType": request.app,
        "resources": _resources(request),
        # The bucket at the paths jobs use (domain/jobs/render.MOUNTS) through the feature's
        # claims: a Workspace mounts whole claims (VolumeSpec has no subPath).
        "volumes": [{"name": "home", "persistentVolumeClaimName": home_claim_name(request.name),
                     "mountPath": HOME}, *feature.mounts()],
        "containerConfig": {"command": ["jupyter-lab"], "args": _args(cluster, request.name)},
        "env": [{"name": "JUPYTER_TOKEN", "valueFrom": {"secretKeyRef": {
            "name": token_secret(request.name), "key": TOKEN_KEY}}}],
        "affinity": _affinity(request.instance_group),
    }
    if request.template:
        # the operator's webhook bounds it too, and hyp shows which template it came from
        spec["templateRef"] = {"name": request.template}
    if request.idle_minutes:
        spec["idleShutdown"] = idle_shutdown(cluster, request.name, request.idle_minutes)
    annotations = {HOME_ANNOTATION: f"{request.storage_gib}Gi"}
    if request.instance_group:
        annotations[GROUP_ANNOTATION] = request.instance_group
    return {"apiVersion": API_VERSION, "kind": KIND,
            "metadata": {"name": request.name, "namespace": NAMESPACE, "labels": labels,
                         "annotations": annotations},
            "spec": spec}


def idle_shutdown(cluster: str, name: str, minutes: int) -> Manifest:
    """jupyter-k8s IdleShutdownSpec: the operator probes the image's idle endpoint
    (`api/idle` under the server's base URL, answering `lastActiveTimestamp`: the upstream
    sample config/samples/idle-shutdown/templates/02-jupyter-template.yaml, for this image)."""
    return {"enabled": True, "idleTimeoutInMinutes": minutes, "detection": {"httpGet": {
        "path": base_path(cluster, name) + "api/idle", "port": PORT}}}


def _args(cluster: str, name: str) -> list[str]:
    return ["--ServerApp.ip=0.0.0.0", f"--ServerApp.port={PORT}", "--no-browser",
            f"--ServerApp.base_url={base_path(cluster, name)}", "--ServerApp.root_dir=/",
            f"--ServerApp.preferred_dir={HOME}"]


def _resources(request: SpaceChoice) -> Manifest:
    requests: Manifest = {"cpu": request.cpu, "memory": request.memory}
    limits: Manifest = {"memory": request.memory}
    if request.gpus:
        requests[GPU] = limits[GPU] = str(request.gpus)
    return {"requests": requests, "limits": limits}


def _affinity(group: str | None) -> Manifest:
    """Healthy nodes only, as every podplane workload (domain/jobs/render.py), of the chosen
    group when there is one."""
    terms = [{"key": HEALTH_LABEL, "operator": "In", "values": ["Schedulable"]}]
    if group:
        terms.append({"key": GROUP_LABEL, "operator": "In", "values": [group]})
    return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": terms}]}}}
