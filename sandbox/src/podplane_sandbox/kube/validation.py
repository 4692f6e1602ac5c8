"""The built-in validation clients hit most often, with the API server's field paths and
wording: object names, pod containers and their volume mounts' sub-paths, workload selectors vs
template labels, service ports, Job restart policies."""

from __future__ import annotations

import re
from typing import Any

from podplane_sandbox.kube import errors
from podplane_sandbox.kube.resources import ResourceType
from podplane_sandbox.kube.selectors import match_label_selector

Obj = dict[str, Any]
Cause = dict[str, str]
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
LABEL_NAMES = {"namespaces", "services"}
WORKLOADS = {"apps/deployments", "apps/replicasets", "apps/statefulsets", "apps/daemonsets"}


def _cause(field: str, message: str, reason: str = "FieldValueInvalid") -> Cause:
    return {"field": field, "message": message, "reason": reason}


def _required(field: str) -> Cause:
    return _cause(field, "Required value", "FieldValueRequired")


def validate(rt: ResourceType, obj: Obj, old: Obj | None) -> None:
    if rt.crd is not None:
        return
    causes = _name(rt, obj["metadata"].get("name", ""))
    spec = obj.get("spec") or {}
    if rt.key == "pods":
        causes += _pod_spec(spec, "spec")
    elif rt.key in WORKLOADS:
        causes += _workload(spec)
    elif rt.key == "batch/jobs":
        causes += _job(spec)
    elif rt.key == "services":
        for i, port in enumerate(spec.get("ports") or []):
            if not port.get("port"):
                causes.append(_required(f"spec.ports[{i}].port"))
    if causes:
        raise errors.invalid(rt.kind, rt.group, obj["metadata"].get("name", ""), causes)


def _name(rt: ResourceType, name: str) -> list[Cause]:
    if rt.key in LABEL_NAMES:
        ok, what = len(name) <= 63 and DNS_LABEL.match(name), "RFC 1123 label"
    elif rt.key.startswith("rbac.") or rt.key in ("events",):
        return []  # these allow ':' and other path segment names
    else:
        ok, what = len(name) <= 253 and DNS_SUBDOMAIN.match(name), "RFC 1123 subdomain"
    if ok:
        return []
    return [
        _cause(
            "metadata.name",
            f'Invalid value: "{name}": a lowercase {what} must '
            "consist of lower case alphanumeric characters, '-' or '.', and must start "
            "and end with an alphanumeric character",
        )
    ]


def _pod_spec(spec: Obj, path: str) -> list[Cause]:
    containers = spec.get("containers") or []
    if not containers:
        return [_required(f"{path}.containers")]
    causes: list[Cause] = []
    seen: set[str] = set()
    for i, c in enumerate(containers):
        where = f"{path}.containers[{i}]"
        if not c.get("name"):
            causes.append(_required(f"{where}.name"))
        elif c["name"] in seen:
            causes.append(
                _cause(f"{where}.name", f'Duplicate value: "{c["name"]}"', "FieldValueDuplicate")
            )
        seen.add(c.get("name", ""))
        if not c.get("image"):
            causes.append(_required(f"{where}.image"))
    for kind in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(kind) or []):
            causes += _mounts(c.get("volumeMounts") or [], f"{path}.{kind}[{i}].volumeMounts")
    return causes


def _mounts(mounts: list[Obj], path: str) -> list[Cause]:
    """kubernetes pkg/apis/core/validation `ValidateVolumeMounts`: a `subPath` (and a
    `subPathExpr`) must pass `validateLocalDescendingPath`. The error's field is the list's
    path plus `.subPath`, without the mount's index, as that code builds it
    (`fldPath.Child("subPath")`)."""
    causes: list[Cause] = []
    for mount in mounts:
        for key in ("subPath", "subPathExpr"):
            if mount.get(key):
                causes += _descending(str(mount[key]), f"{path}.{key}")
    return causes


def _descending(target: str, field: str) -> list[Cause]:
    """kubernetes `validateLocalDescendingPath`: not absolute (`path.IsAbs`), and no `..`
    element (`validatePathNoBacksteps`, one error however many); `.` elements pass."""
    causes = []
    if target.startswith("/"):
        causes.append(_cause(field, f'Invalid value: "{target}": must be a relative path'))
    if ".." in target.split("/"):
        causes.append(_cause(field, f'Invalid value: "{target}": must not contain \'..\''))
    return causes


def _workload(spec: Obj) -> list[Cause]:
    selector = spec.get("selector")
    template = spec.get("template") or {}
    labels = (template.get("metadata") or {}).get("labels") or {}
    causes = _pod_spec(template.get("spec") or {}, "spec.template.spec")
    if not selector:
        return [*causes, _required("spec.selector")]
    if not match_label_selector(selector, labels):
        causes.append(
            _cause(
                "spec.template.metadata.labels",
                f"Invalid value: {labels!r}: `selector` does not match template `labels`",
            )
        )
    return causes


def _job(spec: Obj) -> list[Cause]:
    template_spec = (spec.get("template") or {}).get("spec") or {}
    causes = _pod_spec(template_spec, "spec.template.spec")
    policy = template_spec.get("restartPolicy")
    if policy not in (None, "Never", "OnFailure"):
        causes.append(
            _cause(
                "spec.template.spec.restartPolicy",
                f'Unsupported value: "{policy}": supported values: "OnFailure", "Never"',
                "FieldValueNotSupported",
            )
        )
    return causes
