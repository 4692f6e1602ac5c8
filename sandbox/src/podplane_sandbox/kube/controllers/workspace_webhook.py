"""The workspace operator's admission webhooks for Workspace (jupyter-infra/jupyter-k8s
`internal/webhook/v1alpha1`), the parts the sandbox applies:

- `workspace_webhook.go` Default: desiredStatus Running when unset; annotations
  `workspace.jupyter.org/created-by` (CREATE only) and `last-updated-by` from the request's
  user (`stringutil.SanitizeUsername`: JSON-escaped); created-by cannot change afterwards
  (`constants.go` SetOnCreateOnly).
- With spec.templateRef (namespace default: the workspace's), on create the template's
  defaults fill what the workspace leaves unset (`core_defaulter.go`: image, ownershipType,
  containerConfig, accessType, appType; `storage_defaulter.go`: storage from primaryStorage
  defaultSize, its class and mount path; resources, idle shutdown and access strategy from
  their defaults; `volume_defaulter.go`: defaultVolumes when the workspace has no volumes),
  then `template_validator.go` ValidateCreateWorkspace refuses an image not
  allowed (`image_validator.go`: allowedImages, else defaultImage alone, unless
  allowCustomImages), requests or limits outside `resourceBounds` and a cpu/memory limit
  below its request (`resource_validator.go`), and a storage size outside minSize/maxSize
  (`storage_validator.go`): "workspace violates template '<t>' constraints: <messages>".
- The WorkspaceTemplate webhook (`template_webhook.go` validateTemplateConsistency) refuses a
  template whose resourceBounds or primaryStorage min exceeds its max. Its failurePolicy is
  ignore: while the operator is not serving, templates are written unchecked.
Both webhooks have failurePolicy=fail (their kubebuilder markers): while the operator's
Deployment has no ready replica, kube-apiserver cannot call them and refuses every write of a
Workspace (500, "failed calling webhook ... no endpoints available for service
"jupyter-k8s-webhook-service"", the service named as upstream's kustomize config names it).
A refusal is the webhook's denial (controller-runtime `admission.Denied`, 403):
`admission webhook "vworkspace-v1alpha1.kb.io" denied the request: ...`. Quantities are quoted
as written (Go prints them canonically). Not applied: env/label requirements, secondary
storages, init containers, idle-shutdown overrides, update-time checks, the template's default
image consistency.
"""

from __future__ import annotations

import json
from typing import Any

from podplane_sandbox.kube import requester
from podplane_sandbox.kube.errors import KubeError
from podplane_sandbox.kube.util import clone, quantity

Obj = dict[str, Any]
CREATED_BY = "workspace.jupyter.org/created-by"
UPDATED_BY = "workspace.jupyter.org/last-updated-by"
TEMPLATES = "workspace.jupyter.org/workspacetemplates"
CORE = (("image", "defaultImage"), ("ownershipType", "defaultOwnershipType"),
        ("containerConfig", "defaultContainerConfig"), ("accessType", "defaultAccessType"),
        ("appType", "appType"), ("resources", "defaultResources"),
        ("idleShutdown", "defaultIdleShutdown"), ("accessStrategy", "defaultAccessStrategy"))


def admitter(store: Any) -> Any:
    def admit(rt: Any, obj: Obj, old: Obj | None) -> None:
        if obj["metadata"].get("deletionTimestamp") or not requester.current():
            return  # the operator's own writes (finalizer, status, idle stop) keep as they are
        if not _serving(store):
            raise KubeError(500, 'Internal error occurred: failed calling webhook '
                            '"mworkspace-v1alpha1.kb.io": failed to call webhook: Post '
                            '"https://jupyter-k8s-webhook-service.jupyter-k8s-system.svc:443/'
                            'mutate-workspace-jupyter-org-v1alpha1-workspace?timeout=10s": '
                            'no endpoints available for service "jupyter-k8s-webhook-service"',
                            "InternalError")
        spec = obj.setdefault("spec", {})
        spec.setdefault("desiredStatus", "Running")
        _annotate(obj, old)
        if old is None and (spec.get("templateRef") or {}).get("name"):
            template = _template(store, obj)
            _defaults(spec, template["spec"])
            _validate(spec, template)
    return admit


def template_admitter(store: Any) -> Any:
    def admit(rt: Any, obj: Obj, old: Obj | None) -> None:
        if obj["metadata"].get("deletionTimestamp") or not requester.current() \
                or not _serving(store):
            return   # failurePolicy=ignore
        problem = _inconsistent(obj.get("spec") or {}, obj["metadata"].get("name", ""))
        if problem:
            raise _denied(problem, "vworkspacetemplate-v1alpha1.kb.io")
    return admit


def _inconsistent(tpl: Obj, name: str) -> str | None:
    """validateTemplateConsistency: bounds no value can satisfy."""
    for resource, bound in ((tpl.get("resourceBounds") or {}).get("resources") or {}).items():
        if quantity(bound["min"]) > quantity(bound["max"]):
            return (f'resourceBounds for "{resource}" has min {bound["min"]} greater than max '
                    f'{bound["max"]}: no value can satisfy these bounds (template "{name}")')
    primary = tpl.get("primaryStorage") or {}
    if primary.get("minSize") and primary.get("maxSize") and \
            quantity(primary["minSize"]) > quantity(primary["maxSize"]):
        return (f"primaryStorage.minSize {primary['minSize']} is greater than "
                f"primaryStorage.maxSize {primary['maxSize']}: no storage size can satisfy "
                f'these bounds (template "{name}")')
    return None


def _serving(store: Any) -> bool:
    dep = store.find("apps/deployments", "jupyter-k8s-system", "jupyter-k8s-controller-manager")
    return bool(((dep or {}).get("status") or {}).get("readyReplicas"))


def _annotate(obj: Obj, old: Obj | None) -> None:
    annotations = obj["metadata"].setdefault("annotations", {})
    user = json.dumps(requester.current())[1:-1]
    if old is None:
        annotations[CREATED_BY] = user
    else:
        before = (old["metadata"].get("annotations") or {}).get(CREATED_BY)
        annotations.pop(CREATED_BY, None)
        if before is not None:
            annotations[CREATED_BY] = before
    annotations[UPDATED_BY] = user


def _denied(message: str, hook: str = "vworkspace-v1alpha1.kb.io") -> KubeError:
    return KubeError(403, f'admission webhook "{hook}" denied the request: {message}',
                     "Forbidden")


def _template(store: Any, ws: Obj) -> Obj:
    ref = ws["spec"]["templateRef"]
    ns = ref.get("namespace") or ws["metadata"].get("namespace", "")
    found = store.find(TEMPLATES, ns, ref["name"])
    if found is None:
        raise _denied(f"failed to apply template defaults: workspacetemplates."
                      f'workspace.jupyter.org "{ref["name"]}" not found',
                      "mworkspace-v1alpha1.kb.io")
    return found  # type: ignore[no-any-return]


def _defaults(spec: Obj, tpl: Obj) -> None:
    for mine, theirs in CORE:
        if not spec.get(mine) and tpl.get(theirs):
            spec[mine] = clone(tpl[theirs])
    if not spec.get("volumes") and tpl.get("defaultVolumes"):   # volume_defaulter.go
        spec["volumes"] = clone(tpl["defaultVolumes"])
    primary = tpl.get("primaryStorage")
    if primary is None:
        return
    if spec.get("storage") is None and primary.get("defaultSize"):
        spec["storage"] = {}
    storage = spec.get("storage")
    if storage is not None:
        for mine, theirs in (("size", "defaultSize"), ("storageClassName",
                             "defaultStorageClassName"), ("mountPath", "defaultMountPath")):
            if not storage.get(mine) and primary.get(theirs):
                storage[mine] = primary[theirs]


def _validate(spec: Obj, template: Obj) -> None:
    tpl, name = template["spec"], template["metadata"]["name"]
    problems = []
    allowed = tpl.get("allowedImages") or [tpl.get("defaultImage")]
    if spec.get("image") and not tpl.get("allowCustomImages") and spec["image"] not in allowed:
        problems.append(f"Image '{spec['image']}' is not allowed by template '{name}'. "
                        f"Allowed images: [{' '.join(map(str, allowed))}]")
    problems += _resource_problems(spec.get("resources") or {}, tpl, name)
    size = (spec.get("storage") or {}).get("size")
    primary = tpl.get("primaryStorage") or {}
    if size and primary.get("minSize") and quantity(size) < quantity(primary["minSize"]):
        problems.append(f"Storage size {size} is below minimum {primary['minSize']} required "
                        f"by template '{name}'")
    if size and primary.get("maxSize") and quantity(size) > quantity(primary["maxSize"]):
        problems.append(f"Storage size {size} exceeds maximum {primary['maxSize']} allowed by "
                        f"template '{name}'")
    if problems:
        text = problems[0] if len(problems) == 1 else \
            f"{len(problems)} violations: " + "; ".join(problems)
        raise _denied(f"workspace violates template '{name}' constraints: {text}")


def _resource_problems(resources: Obj, tpl: Obj, name: str) -> list[str]:
    """resource_validator.go validateResourceBounds: limits at least requests (cpu, memory),
    then requests and limits each within the template's bounds."""
    requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
    problems = []
    for resource, label in (("cpu", "CPU"), ("memory", "Memory")):
        if resource in requests and resource in limits and \
                quantity(limits[resource]) < quantity(requests[resource]):
            what = "memory" if resource == "memory" else "CPU"
            problems.append(f"{label} limit must be greater than or equal to {what} request")
    bounds = (tpl.get("resourceBounds") or {}).get("resources") or {}
    for kind, values in (("request", requests), ("limit", limits)):
        for resource, bound in bounds.items():
            if resource not in values:
                continue
            value = values[resource]
            if quantity(value) < quantity(bound["min"]):
                problems.append(f"{resource} {kind} {value} is below minimum {bound['min']} "
                                f"required by template '{name}'")
            if quantity(value) > quantity(bound["max"]):
                problems.append(f"{resource} {kind} {value} exceeds maximum {bound['max']} "
                                f"allowed by template '{name}'")
    return problems
