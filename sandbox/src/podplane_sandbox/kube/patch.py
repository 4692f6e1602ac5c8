"""Patch flavours: JSON merge (RFC 7386), strategic merge, JSON patch (RFC 6902).

Strategic merge has no schema here: list merge keys come from the field name, which
matches what the real API's Go types declare for the lists workloads touch.
"""

from __future__ import annotations

from typing import Any

from podplane_sandbox.kube.errors import KubeError
from podplane_sandbox.kube.util import clone

MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "imagePullSecrets": "name",
    "tolerations": "key",
    "hostAliases": "ip",
    "conditions": "type",
    "ownerReferences": "uid",
    "resourceClaims": "name",
    "topologySpreadConstraints": "topologyKey",
    "taints": "key",
}
PRIMITIVE_MERGE = {"finalizers"}


def merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return clone(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _merge_key(field: str, items: list[Any]) -> str | None:
    if field == "ports":
        dicts = [i for i in items if isinstance(i, dict)]
        return "containerPort" if any("containerPort" in i for i in dicts) else "port"
    return MERGE_KEYS.get(field)


def strategic_merge(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return clone(patch)
    if patch.get("$patch") == "replace":
        return {k: clone(v) for k, v in patch.items() if k != "$patch"}
    if patch.get("$patch") == "delete":
        return None
    result = dict(target) if isinstance(target, dict) else {}
    retain = patch.get("$retainKeys")
    for key, value in patch.items():
        if key.startswith("$setElementOrder/") or key in ("$retainKeys", "$patch"):
            continue
        if key.startswith("$deleteFromPrimitiveList/"):
            name = key.split("/", 1)[1]
            result[name] = [v for v in result.get(name) or [] if v not in value]
            continue
        if value is None:
            result.pop(key, None)
        elif isinstance(value, list):
            result[key] = _merge_list(key, result.get(key), value)
        elif isinstance(value, dict):
            merged = strategic_merge(result.get(key), value)
            if merged is None:
                result.pop(key, None)
            else:
                result[key] = merged
        else:
            result[key] = value
    if isinstance(retain, list):
        result = {k: v for k, v in result.items() if k in retain}
    return result


def _merge_list(field: str, current: Any, patch: list[Any]) -> list[Any]:
    current = current if isinstance(current, list) else []
    if field in PRIMITIVE_MERGE:
        return current + [v for v in patch if v not in current]
    if any(isinstance(p, dict) and p.get("$patch") == "replace" for p in patch):
        return [clone(p) for p in patch if not (isinstance(p, dict) and "$patch" in p)]
    key = _merge_key(field, current + patch)
    if key is None or not all(isinstance(p, dict) for p in patch):
        return clone(patch)
    out = [clone(c) for c in current]
    for item in patch:
        idx = next(
            (i for i, c in enumerate(out) if isinstance(c, dict) and c.get(key) == item.get(key)),
            None,
        )
        if item.get("$patch") == "delete":
            if idx is not None:
                out.pop(idx)
            continue
        if idx is None:
            out.append(strategic_merge({}, item))
        else:
            out[idx] = strategic_merge(out[idx], item)
    return out


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise KubeError(422, f"invalid JSON pointer {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _parent(doc: Any, parts: list[str]) -> Any:
    cur = doc
    for part in parts[:-1]:
        if isinstance(cur, list):
            cur = cur[int(part)]
        elif isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            raise KubeError(422, f"the server rejected our request: path not found: /{part}")
    return cur


def _get(doc: Any, parts: list[str]) -> Any:
    cur = doc
    for part in parts:
        cur = cur[int(part)] if isinstance(cur, list) else cur[part]
    return cur


def json_patch(doc: Any, ops: Any) -> Any:
    if not isinstance(ops, list):
        raise KubeError(400, "json patch must be a list of operations")
    doc = clone(doc)
    for op in ops:
        try:
            doc = _apply_op(doc, op)
        except (KeyError, IndexError, ValueError, TypeError) as exc:
            raise KubeError(
                422,
                f"the server rejected our request due to an error in our "
                f"request: {op.get('op')} {op.get('path')}: {exc}",
            ) from exc
    return doc


def _apply_op(doc: Any, op: dict[str, Any]) -> Any:
    kind, parts = op.get("op"), _pointer(op.get("path", ""))
    if kind == "test":
        if _get(doc, parts) != op.get("value"):
            raise KubeError(422, f"testing value {op.get('path')} failed")
        return doc
    if kind in ("move", "copy"):
        value = clone(_get(doc, _pointer(op["from"])))
        if kind == "move":
            doc = _apply_op(doc, {"op": "remove", "path": op["from"]})
        return _apply_op(doc, {"op": "add", "path": op["path"], "value": value})
    if not parts:
        return clone(op.get("value")) if kind in ("add", "replace") else None
    parent, last = _parent(doc, parts), parts[-1]
    if kind == "add":
        if isinstance(parent, list):
            parent.insert(len(parent) if last == "-" else int(last), clone(op["value"]))
        else:
            parent[last] = clone(op["value"])
    elif kind == "remove":
        del parent[int(last) if isinstance(parent, list) else last]
    elif kind == "replace":
        if isinstance(parent, list):
            parent[int(last)] = clone(op["value"])
        else:
            if last not in parent:
                raise KeyError(last)
            parent[last] = clone(op["value"])
    else:
        raise KubeError(422, f"unknown json patch op {kind!r}")
    return doc
