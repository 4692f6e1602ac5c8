"""Resource verbs: list, get, create, replace, patch, delete, plus status and scale."""

from __future__ import annotations

import base64
import bisect
import json
from typing import Any

import yaml

from podplane_sandbox.kube import patch as patches
from podplane_sandbox.kube import protobuf, tables
from podplane_sandbox.kube.crds import check_custom_object
from podplane_sandbox.kube.errors import KubeError
from podplane_sandbox.kube.paths import Target
from podplane_sandbox.kube.resources import ResourceType
from podplane_sandbox.kube.selectors import field_selector, label_selector
from podplane_sandbox.kube.store import Store
from podplane_sandbox.kube.tables import jsonpath
from podplane_sandbox.kube.util import clone

Obj = dict[str, Any]
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY = "application/apply-patch+yaml"


def parse_body(raw: bytes, content_type: str) -> Any:
    if not raw:
        return None
    if "protobuf" in content_type:
        return protobuf.decode(raw)
    if "cbor" in content_type:
        raise KubeError(
            415,
            "the body of the request was in an unknown format - accepted "
            "media types include: application/json, application/yaml",
            "UnsupportedMediaType",
        )
    try:
        if "yaml" in content_type:
            return yaml.load(raw, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        return json.loads(raw)
    except (ValueError, yaml.YAMLError) as exc:
        raise KubeError(400, f"the body of the request was in an unknown format: {exc}") from exc


def served(rt: ResourceType, version: str, obj: Obj) -> Obj:
    """The object as the requested version (no conversion beyond apiVersion)."""
    want = rt.api_version_for(version)
    if obj.get("apiVersion") == want:
        return obj
    return {**obj, "apiVersion": want}


class Handlers:
    def __init__(self, store: Store) -> None:
        self.store = store

    # ---- reads ----------------------------------------------------------------
    def list_objects(self, t: Target, q: dict[str, str], want_table: bool) -> Obj:
        objs, meta = self._page(t, q)
        if want_table:
            return tables.table(
                t.rt,
                t.version,
                objs,
                self.store.clock.now(),
                q.get("includeObject", "Metadata"),
                meta,
            )
        return {
            "kind": t.rt.kind + "List",
            "apiVersion": t.rt.api_version_for(t.version),
            "metadata": meta,
            "items": [served(t.rt, t.version, o) for o in objs],
        }

    def _page(self, t: Target, q: dict[str, str]) -> tuple[list[Obj], Obj]:
        """One page in (namespace, name) order, walking the store's sorted keys."""
        labels = label_selector(q.get("labelSelector"))
        fields = field_selector(q.get("fieldSelector"))
        selective = bool(q.get("labelSelector") or q.get("fieldSelector"))
        keys = self.store.sorted_keys(t.rt.key)
        lo, hi = 0, len(keys)
        if t.rt.namespaced and t.namespace:
            lo = bisect.bisect_left(keys, (t.namespace, ""))
            hi = bisect.bisect_left(keys, (t.namespace + "\x00", ""))
        after = _decode_continue(q.get("continue"))
        if after is not None:
            lo = max(lo, bisect.bisect_right(keys, after))
        limit = int(q.get("limit") or 0)
        meta: Obj = {"resourceVersion": str(self.store.rv)}
        objs: list[Obj] = []
        for i in range(lo, hi):
            obj = self.store.find(t.rt.key, *keys[i])
            if obj is None or not (labels(obj["metadata"].get("labels") or {}) and fields(obj)):
                continue
            if limit and len(objs) == limit:
                last = objs[-1]["metadata"]
                meta["continue"] = _encode_continue(last.get("namespace", ""), last["name"])
                if not selective:
                    meta["remainingItemCount"] = hi - i
                break
            objs.append(obj)
        return objs, meta

    def get(self, t: Target) -> Obj:
        obj = self.store.get(t.rt, t.namespace, t.name)
        if t.sub == "scale":
            return scale_of(t.rt, obj)
        return served(t.rt, t.version, obj)

    # ---- writes ---------------------------------------------------------------
    def create(self, t: Target, body: Any, q: dict[str, str]) -> tuple[Obj, list[str]]:
        obj = self._object_body(t, body)
        if t.rt.namespaced:
            ns = obj["metadata"].get("namespace")
            if ns and t.namespace and ns != t.namespace:
                raise KubeError(
                    400,
                    "the namespace of the provided object does not match the "
                    "namespace sent on the request",
                )
        obj, warnings = self._checked(t, obj, q)
        if q.get("dryRun"):
            return obj, warnings
        return served(t.rt, t.version, self.store.create(t.rt, obj, t.namespace)), warnings

    def replace(self, t: Target, body: Any, q: dict[str, str]) -> tuple[Obj, list[str]]:
        obj = self._object_body(t, body)
        meta = obj["metadata"]
        if meta.get("name") and meta["name"] != t.name:
            raise KubeError(
                400,
                f"the name of the object ({meta['name']}) does not match the "
                f"name on the URL ({t.name})",
            )
        meta["name"] = t.name
        if t.rt.namespaced:
            meta["namespace"] = t.namespace
        if t.sub == "scale":
            return self._set_scale(t, obj), []
        warnings: list[str] = []
        if t.sub != "status":
            obj, warnings = self._checked(t, obj, q)
        if q.get("dryRun"):
            return served(t.rt, t.version, obj), warnings
        return served(t.rt, t.version, self.store.update(t.rt, obj, t.sub or None)), warnings

    def patch(
        self, t: Target, body: Any, content_type: str, q: dict[str, str]
    ) -> tuple[Obj, list[str]]:
        ctype = content_type.split(";")[0].strip()
        try:
            current: Obj | None = self.store.get(t.rt, t.namespace, t.name)
        except KubeError:
            if ctype != APPLY or t.sub:
                raise
            current = None
        if current is None:
            obj = self._object_body(t, body)
            obj["metadata"]["name"] = t.name
            return self.create(t, obj, q)
        base = scale_of(t.rt, current) if t.sub == "scale" else served(t.rt, t.version, current)
        patched = self._apply_patch(t.rt, base, body, ctype)
        if not isinstance(patched, dict):
            raise KubeError(422, "the patch produced an object that is not a JSON object")
        patched.setdefault("metadata", {})
        patched["metadata"]["name"] = t.name
        if t.rt.namespaced:
            patched["metadata"]["namespace"] = t.namespace
        if t.sub == "scale":
            return self._set_scale(t, patched), []
        if ctype == APPLY or patched["metadata"].get("resourceVersion") == base["metadata"].get(
            "resourceVersion"
        ):
            patched["metadata"].pop("resourceVersion", None)
        warnings: list[str] = []
        if t.sub != "status":
            patched, warnings = self._checked(t, patched, q)
        if q.get("dryRun"):
            return served(t.rt, t.version, patched), warnings
        return served(t.rt, t.version, self.store.update(t.rt, patched, t.sub or None)), warnings

    def _apply_patch(self, rt: ResourceType, base: Obj, body: Any, ctype: str) -> Any:
        if ctype == JSON_PATCH:
            return patches.json_patch(base, body)
        if not isinstance(body, dict):
            raise KubeError(400, "the patch body must be a JSON object")
        if ctype == MERGE:
            return patches.merge_patch(base, body)
        if ctype == STRATEGIC:
            if rt.crd is not None:
                raise KubeError(
                    415,
                    "strategic merge patch is not supported for custom "
                    "resources; use a merge patch",
                    "UnsupportedMediaType",
                )
            return patches.strategic_merge(base, body)
        if ctype == APPLY:
            body = {k: v for k, v in body.items() if k != "status"}
            return patches.strategic_merge(base, body)
        raise KubeError(
            415,
            f"the body of the request was in an unknown format - accepted "
            f"media types include: {JSON_PATCH}, {MERGE}, {STRATEGIC}, {APPLY}",
            "UnsupportedMediaType",
        )

    def delete(self, t: Target, body: Any, q: dict[str, str]) -> Obj:
        options = dict(body) if isinstance(body, dict) else {}
        if "propagationPolicy" in q:
            options["propagationPolicy"] = q["propagationPolicy"]
        if "gracePeriodSeconds" in q:
            options["gracePeriodSeconds"] = int(q["gracePeriodSeconds"])
        if options.get("propagationPolicy") is None and t.rt.key in (
            "apps/replicasets",
            "apps/deployments",
            "apps/daemonsets",
            "apps/statefulsets",
        ):
            options["propagationPolicy"] = "Background"
        if q.get("dryRun") or (isinstance(body, dict) and body.get("dryRun")):
            return served(t.rt, t.version, self.store.get(t.rt, t.namespace, t.name))
        return served(t.rt, t.version, self.store.delete(t.rt, t.namespace, t.name, options))

    def pod_action(self, t: Target, body: Any) -> Obj:
        """pods/eviction (what `kubectl drain` posts) and pods/binding (custom schedulers)."""
        pod = self.store.get(t.rt, t.namespace, t.name)
        if t.sub == "binding":
            node = ((body or {}).get("target") or {}).get("name")
            if not node or pod.get("spec", {}).get("nodeName"):
                raise KubeError(409, f"pod {t.name} is already assigned or has no target")
            bound = clone(pod)
            bound["spec"]["nodeName"] = node
            self.store.update(t.rt, bound, check_rv=False)
        else:
            options = (body or {}).get("deleteOptions") or {}
            self.store.delete(t.rt, t.namespace, t.name, options)
        return {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "code": 201,
        }

    def delete_collection(self, t: Target, body: Any, q: dict[str, str]) -> Obj:
        listing = self.list_objects(t, q, want_table=False)
        for obj in listing["items"]:
            meta = obj["metadata"]
            sub = Target(t.rt, t.version, meta.get("namespace", ""), meta["name"], "")
            self.delete(sub, body, q)
        return listing

    # ---- helpers --------------------------------------------------------------
    def _object_body(self, t: Target, body: Any) -> Obj:
        if not isinstance(body, dict):
            raise KubeError(400, "the request body must be a JSON object")
        obj = body  # freshly parsed from the request: ours to change
        kind = obj.get("kind")
        if t.sub not in ("scale",) and kind and kind != t.rt.kind:
            raise KubeError(
                400,
                f"the API version in the data ({obj.get('apiVersion')}) does "
                f"not match the expected API version ({t.rt.api_version})",
            )
        if not isinstance(obj.get("metadata"), dict):
            obj["metadata"] = {}
        obj["apiVersion"] = (
            t.rt.api_version_for(t.version)
            if t.sub != "scale"
            else obj.get("apiVersion", "autoscaling/v1")
        )
        return obj

    def _checked(self, t: Target, obj: Obj, q: dict[str, str]) -> tuple[Obj, list[str]]:
        if t.rt.crd is None:
            return obj, []
        return check_custom_object(t.rt, t.version, obj, q.get("fieldValidation", "Warn"))

    def _set_scale(self, t: Target, scale: Obj) -> Obj:
        current = self.store.get(t.rt, t.namespace, t.name)
        sent_rv = scale.get("metadata", {}).get("resourceVersion")
        if sent_rv and sent_rv != current["metadata"]["resourceVersion"]:
            from podplane_sandbox.kube.errors import conflict

            raise conflict(t.rt.group, t.rt.plural, t.name)
        replicas = (scale.get("spec") or {}).get("replicas", 0)
        obj = clone(current)
        spec_path, _, _ = _scale_paths(t.rt)
        _set_path(obj, spec_path, replicas)
        return scale_of(t.rt, self.store.update(t.rt, obj, check_rv=False))


def _scale_paths(rt: ResourceType) -> tuple[str, str, str]:
    for v in (rt.crd or {}).get("spec", {}).get("versions", []):
        sc = (v.get("subresources") or {}).get("scale")
        if sc:
            return (
                sc.get("specReplicasPath", ".spec.replicas"),
                sc.get("statusReplicasPath", ".status.replicas"),
                sc.get("labelSelectorPath", ""),
            )
    return ".spec.replicas", ".status.replicas", ""


def _set_path(obj: Obj, path: str, value: Any) -> None:
    parts = path.strip(".").split(".")
    cur = obj
    for p in parts[:-1]:
        cur = cur.setdefault(p, {})
    cur[parts[-1]] = value


def scale_of(rt: ResourceType, obj: Obj) -> Obj:
    spec_path, status_path, sel_path = _scale_paths(rt)
    meta = obj["metadata"]
    selector = ""
    if sel_path:
        selector = jsonpath(obj, sel_path) or ""
    else:
        match = ((obj.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
        selector = ",".join(f"{k}={v}" for k, v in match.items())
    default = 1 if rt.crd is None else 0
    replicas = jsonpath(obj, spec_path)
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            k: meta[k]
            for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
            if k in meta
        },
        "spec": {"replicas": replicas if replicas is not None else default},
        "status": {"replicas": jsonpath(obj, status_path) or 0, "selector": selector},
    }


def _encode_continue(ns: str, name: str) -> str:
    return base64.urlsafe_b64encode(json.dumps([ns, name]).encode()).decode()


def _decode_continue(token: str | None) -> tuple[str, str] | None:
    if not token:
        return None
    try:
        ns, name = json.loads(base64.urlsafe_b64decode(token.encode()))
        return str(ns), str(name)
    except (ValueError, TypeError) as exc:
        raise KubeError(400, "continue key is not valid: " + str(exc)) from exc
