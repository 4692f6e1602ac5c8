"""The HyperPod inference operator (EKS add-on `amazon-sagemaker-hyperpod-inference`):
InferenceEndpointConfig -> Deployment + Service (+ ALB Ingress) -> status. docs/sandbox.md,
"HyperPod inference operator", lists the rules; in short:

- The operator acts only while its add-on is ACTIVE (a DEGRADED add-on is an operator that
  could not take its role or start: aws/eks/inference_addon.py) and its controller Deployment
  `hyperpod-inference-system/hyperpod-inference-controller-manager` has a ready replica.
- The model server: a Deployment named after the config, `spec.replicas` pods (default 1) of
  `spec.worker` (image, args, command, env, resources, the invocation port), placed on nodes
  whose `node.kubernetes.io/instance-type` is `spec.instanceType` (../shared/crds/
  hyperpod-inference InferenceEndpointConfig: `instanceType` "Instance Type to deploy the
  model on", `worker`; hyperpod-node-labels.md for the label); a ClusterIP Service of the same
  name on that port. With `spec.loadBalancer` set, an Ingress `alb-<name>` whose status gets an
  ALB hostname (the AWS Load Balancer Controller's job; the migration script in
  charts/inference-operator finds the operator's ingresses by the `alb-` prefix).
- Status in the CRD's fields: `state` and `deploymentStatus.deploymentObjectOverallState`
  (enum DeploymentPending, DeploymentInProgress, DeploymentComplete, DeploymentFailed; the
  `hyp` CLI reads the latter), `deploymentStatus.status` copied from the Deployment,
  `replicas`, `selector` (the scale subresource's paths), `observedGeneration`, and one
  condition per state reached. Sources are silent on condition types: the sandbox uses the
  state names. A worker without an image or port is DeploymentFailed.
The Deployment and Service are owned by the config: deleting it removes them (GC).
- Model metrics: the operator has the worker's metrics scraped (for the cluster's Prometheus
  workspace) only while `spec.metrics.enabled` (CRD default true), at
  `spec.metrics.modelMetrics.port` (CRD default 8080, ../shared/crds/hyperpod-inference);
  AWS docs (sagemaker-hyperpod-model-deployment-deploy-ftm): "the `port` value needs to be the
  same as the `containerPort` value under `modelInvocationPort`". Elsewhere nothing answers, so
  the workspace has no sample of that worker (publishes_metrics; keda_prometheus.py reads it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from podplane_sandbox.kube.addon_manifests import INFERENCE_GROUP, INFERENCE_NS, INFERENCE_SA
from podplane_sandbox.kube.controllers import inference_autoscaling as autoscaling
from podplane_sandbox.kube.controllers.framework import Controller, Ctx, Key, owner_ref
from podplane_sandbox.kube.store import Event
from podplane_sandbox.kube.util import clone

Obj = dict[str, Any]
CONFIGS = f"{INFERENCE_GROUP}/inferenceendpointconfigs"
KIND = "InferenceEndpointConfig"
ADDON = "amazon-sagemaker-hyperpod-inference"
APP_LABEL = "app"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
POLL_SECONDS = 15.0
DEFAULT_METRICS_PORT = 8080   # the CRD's default for spec.metrics.modelMetrics.port


def controllers(ctx: Ctx, source: Any, eks_cluster_name: str | None) -> list[Controller]:
    if not hasattr(source, "sandbox_addons"):
        return []
    from podplane_sandbox.kube.controllers.jumpstart_operator import JumpStartOperator
    return [InferenceOperator(ctx, source, eks_cluster_name),
            JumpStartOperator(ctx, source, eks_cluster_name)]


class InferenceOperator(Controller):
    primary = CONFIGS
    kind = KIND

    def __init__(self, ctx: Ctx, source: Any, eks_cluster_name: str | None) -> None:
        super().__init__(ctx)
        self.source, self.cluster = source, eks_cluster_name

    def keys_for(self, event: Event) -> Iterable[Key]:
        meta = event.obj["metadata"]
        ns = meta.get("namespace", "")
        if event.rt_key == self.primary:
            yield (ns, meta["name"])
        elif event.rt_key in ("apps/deployments", "services", "networking.k8s.io/ingresses"):
            for ref in meta.get("ownerReferences") or []:
                if ref.get("controller") and ref.get("kind") == self.kind:
                    yield (ns, ref["name"])
            if event.rt_key == "apps/deployments" and (ns, meta["name"]) == OPERATOR:
                yield from self.initial_keys()

    def initial_keys(self) -> Iterable[Key]:
        if self.ctx.store.registry.by_key(self.primary) is not None:
            yield from super().initial_keys()

    def resolved(self, config: Obj) -> tuple[Obj, str | None]:
        """The config with the worker to run, or why it cannot run."""
        return config, _invalid(config)

    def reconcile(self, key: Key) -> float | None:
        if self.ctx.store.registry.by_key(self.primary) is None:
            return None
        config = self.primary_obj(key)
        if config is None or config["metadata"].get("deletionTimestamp"):
            return None
        if not self._running():
            return POLL_SECONDS   # the add-on's health is not a Kubernetes event: look again
        status = clone(config.get("status") or {})
        worker, problem = self.resolved(config)
        if problem is None:
            deployment = self._ensure(worker)
            _deployment_status(status, config, deployment, self.ctx.now_iso())
        else:
            _set_state(status, config, "DeploymentFailed", problem, self.ctx.now_iso())
        self.ctx.update_status(self.primary, config, status)
        return None

    def _running(self) -> bool:
        addons = {a.name: a.status for a in self.source.sandbox_addons(self.cluster)}
        dep = self.ctx.store.find("apps/deployments", *OPERATOR)
        ready = dep is not None and int((dep.get("status") or {}).get("readyReplicas", 0)) > 0
        return addons.get(ADDON) == "ACTIVE" and ready

    def _ensure(self, config: Obj) -> Obj:
        meta = config["metadata"]
        ns, name = meta.get("namespace", "default"), meta["name"]
        wanted = _deployment(config)
        found = self.ctx.store.find("apps/deployments", ns, name)
        if found is not None and config["spec"].get("autoScalingSpec"):
            del wanted["spec"]["replicas"]   # KEDA sets them (inference_autoscaling.py)
        if found is None:
            found = self.ctx.create("apps/deployments", wanted)
        elif any(found["spec"].get(k) != v for k, v in wanted["spec"].items()):
            # only what the operator sets: the API server's defaults are not a change
            new = clone(found)
            new["spec"].update(wanted["spec"])
            found = self.ctx.update("apps/deployments", new)
        autoscaling.ensure(self.ctx, config, name)
        if self.ctx.store.find("services", ns, name) is None:
            self.ctx.create("services", _service(config))
        if (config["spec"].get("loadBalancer") is not None
                and self.ctx.store.find("networking.k8s.io/ingresses", ns, f"alb-{name}") is None):
            ingress = self.ctx.create("networking.k8s.io/ingresses", _ingress(config))
            self.ctx.update_status("networking.k8s.io/ingresses", ingress, {"loadBalancer": {
                "ingress": [{"hostname": _alb_hostname(ns, name)}]}})
        return found


OPERATOR = (INFERENCE_NS, INFERENCE_SA)


def scrape_port(config: Obj) -> int | None:
    """Where the worker's metrics are scraped, or None when metrics are off (CRD defaults)."""
    metrics = config["spec"].get("metrics") or {}
    if metrics.get("enabled", True) is False:
        return None
    return int((metrics.get("modelMetrics") or {}).get("port") or DEFAULT_METRICS_PORT)


def publishes_metrics(config: Obj) -> bool:
    """The scrape reaches the model server: the metrics port is the invocation port."""
    worker = config["spec"].get("worker") or {}
    port = (worker.get("modelInvocationPort") or {}).get("containerPort")
    return port is not None and scrape_port(config) == int(port)


def config_of(store: Any, pod: Obj) -> Obj | None:
    """The InferenceEndpointConfig whose Deployment made the pod (pod -> ReplicaSet ->
    Deployment -> config, by controller ownerReferences), else None."""
    ns, obj = pod["metadata"].get("namespace", "default"), pod
    for key in ("apps/replicasets", "apps/deployments", CONFIGS):
        ref = next((r for r in obj["metadata"].get("ownerReferences") or []
                    if r.get("controller")), None)
        if ref is None or store.registry.by_key(key) is None:
            return None
        found = store.find(key, ns, ref["name"])
        if found is None or found.get("kind") != ref.get("kind"):
            return None
        obj = found
    return obj


def _invalid(config: Obj) -> str | None:
    worker = config["spec"].get("worker") or {}
    if not worker.get("image"):
        return "spec.worker.image is required"
    if not (worker.get("modelInvocationPort") or {}).get("containerPort"):
        return "spec.worker.modelInvocationPort.containerPort is required"
    return None


def _labels(config: Obj) -> Obj:
    return {APP_LABEL: config["metadata"]["name"]}


def _meta(config: Obj, name: str) -> Obj:
    return {"name": name, "namespace": config["metadata"].get("namespace", "default"),
            "labels": _labels(config), "ownerReferences": [owner_ref(config)]}


def _deployment(config: Obj) -> Obj:
    spec, name = config["spec"], config["metadata"]["name"]
    worker = spec["worker"]
    port = worker["modelInvocationPort"]
    container: Obj = {"name": "inference", "image": worker["image"],
                      "ports": [{"containerPort": port["containerPort"],
                                 "name": port.get("name") or "http"}],
                      "resources": worker.get("resources") or {}}
    for field, key in (("args", "args"), ("command", "command"),
                       ("environmentVariables", "env"), ("workingDir", "workingDir")):
        if worker.get(field):
            container[key] = worker[field]
    mount = worker.get("modelVolumeMount") or {}
    if mount.get("mountPath"):
        container["volumeMounts"] = [{"name": mount.get("name") or "model-weights",
                                      "mountPath": mount["mountPath"]}]
    pod: Obj = {"containers": [container]}
    if container.get("volumeMounts"):
        pod["volumes"] = [{"name": container["volumeMounts"][0]["name"], "emptyDir": {}}]
    if spec.get("instanceType"):
        pod["nodeSelector"] = {INSTANCE_TYPE: spec["instanceType"]}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta(config, name),
            "spec": {"replicas": int(spec.get("replicas", 1)),
                     "selector": {"matchLabels": _labels(config)},
                     "template": {"metadata": {"labels": _labels(config)}, "spec": pod}}}


def _service(config: Obj) -> Obj:
    port = config["spec"]["worker"]["modelInvocationPort"]["containerPort"]
    return {"apiVersion": "v1", "kind": "Service",
            "metadata": _meta(config, config["metadata"]["name"]),
            "spec": {"type": "ClusterIP", "selector": _labels(config),
                     "ports": [{"name": "http", "port": port, "targetPort": port}]}}


def _ingress(config: Obj) -> Obj:
    name = config["metadata"]["name"]
    port = config["spec"]["worker"]["modelInvocationPort"]["containerPort"]
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {**_meta(config, f"alb-{name}"), "annotations": {
                "alb.ingress.kubernetes.io/scheme": "internal"}},
            "spec": {"ingressClassName": "alb", "rules": [{"http": {"paths": [{
                "path": "/", "pathType": "Prefix", "backend": {"service": {
                    "name": name, "port": {"number": port}}}}]}}]}}


def _alb_hostname(ns: str, name: str) -> str:
    """The form of an internal ALB's DNS name (internal-k8s-<ns>-<name>-<hash>-<id>...)."""
    digest = hashlib.sha256(f"{ns}/{name}".encode()).hexdigest()
    return (f"internal-k8s-{ns[:8]}-alb{name[:8]}-{digest[:10]}-{int(digest[10:18], 16)}"
            ".us-west-2.elb.amazonaws.com")


def _deployment_status(status: Obj, config: Obj, deployment: Obj, now: str) -> None:
    live = deployment.get("status") or {}
    wanted = int(config["spec"].get("replicas", 1))
    if config["spec"].get("autoScalingSpec"):   # KEDA's count, not the config's
        wanted = int(deployment["spec"].get("replicas", wanted))
    available = int(live.get("availableReplicas", 0) or 0)
    # A spec change reaches the pods as a rolling update of the operator's Deployment (the
    # CRD's `status.deploymentStatus` is "the native kubernetes deployment that hosts the
    # model", with its updatedReplicas): complete only once the Deployment controller saw
    # the new template and every pod runs it.
    seen = int(live.get("observedGeneration", 0) or 0) >= int(
        deployment["metadata"].get("generation", 1))
    done = (seen and available >= wanted and int(live.get("updatedReplicas", 0) or 0) >= wanted
            and int(live.get("replicas", 0) or 0) == wanted)
    state = "DeploymentComplete" if done else "DeploymentInProgress"
    status["deploymentStatus"] = {
        "name": deployment["metadata"]["name"], "deploymentObjectOverallState": state,
        "status": {k: v for k, v in live.items() if k in (
            "availableReplicas", "readyReplicas", "replicas", "updatedReplicas",
            "unavailableReplicas", "observedGeneration", "conditions")}}
    status["replicas"] = int(live.get("replicas", 0) or 0)
    status["selector"] = f"{APP_LABEL}={config['metadata']['name']}"
    _set_state(status, config, state, f"{available}/{wanted} replicas available", now)


def _set_state(status: Obj, config: Obj, state: str, message: str, now: str) -> None:
    generation = int(config["metadata"].get("generation", 1))
    status["observedGeneration"] = generation   # this generation was reconciled
    if status.get("state") == state and (status.get("conditions") or [{}])[-1].get(
            "message") == message:
        return
    status["state"] = state
    conditions = [c for c in status.get("conditions") or [] if c.get("type") != state]
    for c in conditions:
        c["status"] = "False"
    conditions.append({"type": state, "status": "True", "reason": state, "message": message,
                       "lastTransitionTime": now, "observedGeneration": generation})
    status["conditions"] = conditions
