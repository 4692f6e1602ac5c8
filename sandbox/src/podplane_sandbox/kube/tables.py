"""Server-side Table output for `kubectl get`: the columns kubectl's own printers show."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from podplane_sandbox.kube.resources import ResourceType
from podplane_sandbox.kube.util import human_age, parse_iso

Obj = dict[str, Any]
Col = tuple[str, str, int]  # name, type, priority (1 = only with -o wide)


def _age(obj: Obj, now: float) -> str:
    created = parse_iso(obj.get("metadata", {}).get("creationTimestamp"))
    return human_age(now - created) if created is not None else "<unknown>"


def _pod_row(o: Obj, now: float) -> list[Any]:
    st = o.get("status") or {}
    cs = st.get("containerStatuses") or []
    total = len(o.get("spec", {}).get("containers") or [])
    ready = sum(1 for c in cs if c.get("ready"))
    restarts = sum(int(c.get("restartCount", 0)) for c in cs)
    reason = st.get("reason") or st.get("phase") or "Pending"
    for c in cs:
        state = c.get("state") or {}
        if "waiting" in state and state["waiting"].get("reason"):
            reason = state["waiting"]["reason"]
        elif "terminated" in state and state["terminated"].get("reason"):
            reason = state["terminated"]["reason"]
    if o["metadata"].get("deletionTimestamp"):
        reason = "Terminating"
    return [
        o["metadata"]["name"],
        f"{ready}/{total}",
        reason,
        restarts,
        _age(o, now),
        st.get("podIP") or "<none>",
        o.get("spec", {}).get("nodeName") or "<none>",
        "<none>",
        "<none>",
    ]


def _node_row(o: Obj, now: float) -> list[Any]:
    conds = {c.get("type"): c.get("status") for c in (o.get("status") or {}).get("conditions", [])}
    status = "Ready" if conds.get("Ready") == "True" else "NotReady"
    if o.get("spec", {}).get("unschedulable"):
        status += ",SchedulingDisabled"
    labels = o["metadata"].get("labels") or {}
    roles = sorted(k.split("/", 1)[1] for k in labels if k.startswith("node-role.kubernetes.io/"))
    info = (o.get("status") or {}).get("nodeInfo") or {}
    addrs = {a.get("type"): a.get("address") for a in (o.get("status") or {}).get("addresses", [])}
    return [
        o["metadata"]["name"],
        status,
        ",".join(roles) or "<none>",
        _age(o, now),
        info.get("kubeletVersion", ""),
        addrs.get("InternalIP", "<none>"),
        addrs.get("ExternalIP", "<none>"),
        info.get("osImage", ""),
        info.get("kernelVersion", ""),
        info.get("containerRuntimeVersion", ""),
    ]


def _containers(o: Obj) -> tuple[str, str]:
    cs = o.get("spec", {}).get("template", {}).get("spec", {}).get("containers") or []
    return ",".join(c.get("name", "") for c in cs), ",".join(c.get("image", "") for c in cs)


def _selector(o: Obj) -> str:
    sel = o.get("spec", {}).get("selector") or {}
    labels = sel.get("matchLabels", sel) if isinstance(sel, dict) else {}
    return ",".join(f"{k}={v}" for k, v in labels.items() if isinstance(v, str)) or "<none>"


def _deploy_row(o: Obj, now: float) -> list[Any]:
    st, want = o.get("status") or {}, o.get("spec", {}).get("replicas", 1)
    names, images = _containers(o)
    return [
        o["metadata"]["name"],
        f"{st.get('readyReplicas', 0)}/{want}",
        st.get("updatedReplicas", 0),
        st.get("availableReplicas", 0),
        _age(o, now),
        names,
        images,
        _selector(o),
    ]


def _rs_row(o: Obj, now: float) -> list[Any]:
    st = o.get("status") or {}
    names, images = _containers(o)
    return [
        o["metadata"]["name"],
        o.get("spec", {}).get("replicas", 1),
        st.get("replicas", 0),
        st.get("readyReplicas", 0),
        _age(o, now),
        names,
        images,
        _selector(o),
    ]


def _ds_row(o: Obj, now: float) -> list[Any]:
    st = o.get("status") or {}
    sel = o.get("spec", {}).get("template", {}).get("spec", {}).get("nodeSelector") or {}
    names, images = _containers(o)
    return [
        o["metadata"]["name"],
        st.get("desiredNumberScheduled", 0),
        st.get("currentNumberScheduled", 0),
        st.get("numberReady", 0),
        st.get("updatedNumberScheduled", 0),
        st.get("numberAvailable", 0),
        ",".join(f"{k}={v}" for k, v in sel.items()) or "<none>",
        _age(o, now),
        names,
        images,
        _selector(o),
    ]


def _job_row(o: Obj, now: float) -> list[Any]:
    st = o.get("status") or {}
    conds = {c.get("type"): c.get("status") for c in st.get("conditions") or []}
    status = (
        "Complete"
        if conds.get("Complete") == "True"
        else "Failed"
        if conds.get("Failed") == "True"
        else "Running"
    )
    start, end = parse_iso(st.get("startTime")), parse_iso(st.get("completionTime"))
    duration = human_age((end or now) - start) if start is not None else ""
    names, images = _containers(o)
    return [
        o["metadata"]["name"],
        status,
        f"{st.get('succeeded', 0)}/{o.get('spec', {}).get('completions', 1)}",
        duration,
        _age(o, now),
        names,
        images,
        _selector(o),
    ]


def _svc_row(o: Obj, now: float) -> list[Any]:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    ingress = (st.get("loadBalancer") or {}).get("ingress") or []
    external = ",".join(i.get("hostname") or i.get("ip", "") for i in ingress)
    if not external:
        external = "<pending>" if spec.get("type") == "LoadBalancer" else "<none>"
    ports = ",".join(
        f"{p.get('port')}"
        + (f":{p['nodePort']}" if p.get("nodePort") else "")
        + f"/{p.get('protocol', 'TCP')}"
        for p in spec.get("ports") or []
    )
    sel = ",".join(f"{k}={v}" for k, v in (spec.get("selector") or {}).items()) or "<none>"
    return [
        o["metadata"]["name"],
        spec.get("type", "ClusterIP"),
        spec.get("clusterIP", "<none>"),
        external,
        ports or "<none>",
        _age(o, now),
        sel,
    ]


def _pvc_row(o: Obj, now: float) -> list[Any]:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    return [
        o["metadata"]["name"],
        st.get("phase", "Pending"),
        spec.get("volumeName", ""),
        (st.get("capacity") or {}).get("storage", ""),
        _modes(st.get("accessModes")),
        spec.get("storageClassName") or "<unset>",
        "<unset>",
        _age(o, now),
    ]


def _pv_row(o: Obj, now: float) -> list[Any]:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    ref = spec.get("claimRef") or {}
    claim = f"{ref.get('namespace')}/{ref.get('name')}" if ref else ""
    return [
        o["metadata"]["name"],
        (spec.get("capacity") or {}).get("storage", ""),
        _modes(spec.get("accessModes")),
        spec.get("persistentVolumeReclaimPolicy", "Retain"),
        st.get("phase", "Available"),
        claim,
        spec.get("storageClassName", ""),
        "<unset>",
        "",
        _age(o, now),
    ]


def _modes(modes: list[str] | None) -> str:
    short = {
        "ReadWriteOnce": "RWO",
        "ReadOnlyMany": "ROX",
        "ReadWriteMany": "RWX",
        "ReadWriteOncePod": "RWOP",
    }
    return ",".join(short.get(m, m) for m in modes or [])


def _ns_row(o: Obj, now: float) -> list[Any]:
    return [o["metadata"]["name"], (o.get("status") or {}).get("phase", "Active"), _age(o, now)]


def _cm_row(o: Obj, now: float) -> list[Any]:
    return [
        o["metadata"]["name"],
        len(o.get("data") or {}) + len(o.get("binaryData") or {}),
        _age(o, now),
    ]


def _secret_row(o: Obj, now: float) -> list[Any]:
    return [o["metadata"]["name"], o.get("type", "Opaque"), len(o.get("data") or {}), _age(o, now)]


def _crd_row(o: Obj, now: float) -> list[Any]:
    return [o["metadata"]["name"], o["metadata"].get("creationTimestamp", "")]


def _event_row(o: Obj, now: float) -> list[Any]:
    last = parse_iso(
        o.get("lastTimestamp") or o.get("eventTime") or o["metadata"].get("creationTimestamp")
    )
    inv = o.get("involvedObject") or {}
    return [
        human_age(now - last) if last else "<unknown>",
        o.get("type", ""),
        o.get("reason", ""),
        f"{str(inv.get('kind', '')).lower()}/{inv.get('name', '')}",
        o.get("message", ""),
    ]


def _default_row(o: Obj, now: float) -> list[Any]:
    return [o["metadata"]["name"], _age(o, now)]


S, INT = "string", "integer"
_WIDE_WL = [("Containers", S, 1), ("Images", S, 1), ("Selector", S, 1)]
PRINTERS: dict[str, tuple[list[Col], Callable[[Obj, float], list[Any]]]] = {
    "pods": (
        [
            ("Name", S, 0),
            ("Ready", S, 0),
            ("Status", S, 0),
            ("Restarts", S, 0),
            ("Age", S, 0),
            ("IP", S, 1),
            ("Node", S, 1),
            ("Nominated Node", S, 1),
            ("Readiness Gates", S, 1),
        ],
        _pod_row,
    ),
    "nodes": (
        [
            ("Name", S, 0),
            ("Status", S, 0),
            ("Roles", S, 0),
            ("Age", S, 0),
            ("Version", S, 0),
            ("Internal-IP", S, 1),
            ("External-IP", S, 1),
            ("OS-Image", S, 1),
            ("Kernel-Version", S, 1),
            ("Container-Runtime", S, 1),
        ],
        _node_row,
    ),
    "apps/deployments": (
        [
            ("Name", S, 0),
            ("Ready", S, 0),
            ("Up-to-date", INT, 0),
            ("Available", INT, 0),
            ("Age", S, 0),
            *_WIDE_WL,
        ],
        _deploy_row,
    ),
    "apps/replicasets": (
        [
            ("Name", S, 0),
            ("Desired", INT, 0),
            ("Current", INT, 0),
            ("Ready", INT, 0),
            ("Age", S, 0),
            *_WIDE_WL,
        ],
        _rs_row,
    ),
    "apps/daemonsets": (
        [
            ("Name", S, 0),
            ("Desired", INT, 0),
            ("Current", INT, 0),
            ("Ready", INT, 0),
            ("Up-to-date", INT, 0),
            ("Available", INT, 0),
            ("Node Selector", S, 0),
            ("Age", S, 0),
            *_WIDE_WL,
        ],
        _ds_row,
    ),
    "batch/jobs": (
        [
            ("Name", S, 0),
            ("Status", S, 0),
            ("Completions", S, 0),
            ("Duration", S, 0),
            ("Age", S, 0),
            *_WIDE_WL,
        ],
        _job_row,
    ),
    "services": (
        [
            ("Name", S, 0),
            ("Type", S, 0),
            ("Cluster-IP", S, 0),
            ("External-IP", S, 0),
            ("Port(s)", S, 0),
            ("Age", S, 0),
            ("Selector", S, 1),
        ],
        _svc_row,
    ),
    "persistentvolumeclaims": (
        [
            ("Name", S, 0),
            ("Status", S, 0),
            ("Volume", S, 0),
            ("Capacity", S, 0),
            ("Access Modes", S, 0),
            ("StorageClass", S, 0),
            ("VolumeAttributesClass", S, 0),
            ("Age", S, 0),
        ],
        _pvc_row,
    ),
    "persistentvolumes": (
        [
            ("Name", S, 0),
            ("Capacity", S, 0),
            ("Access Modes", S, 0),
            ("Reclaim Policy", S, 0),
            ("Status", S, 0),
            ("Claim", S, 0),
            ("StorageClass", S, 0),
            ("VolumeAttributesClass", S, 0),
            ("Reason", S, 0),
            ("Age", S, 0),
        ],
        _pv_row,
    ),
    "namespaces": ([("Name", S, 0), ("Status", S, 0), ("Age", S, 0)], _ns_row),
    "configmaps": ([("Name", S, 0), ("Data", INT, 0), ("Age", S, 0)], _cm_row),
    "secrets": ([("Name", S, 0), ("Type", S, 0), ("Data", INT, 0), ("Age", S, 0)], _secret_row),
    "events": (
        [
            ("Last Seen", S, 0),
            ("Type", S, 0),
            ("Reason", S, 0),
            ("Object", S, 0),
            ("Message", S, 0),
        ],
        _event_row,
    ),
    "apiextensions.k8s.io/customresourcedefinitions": (
        [("Name", S, 0), ("Created At", "date", 0)],
        _crd_row,
    ),
}


def _columns_for(
    rt: ResourceType, version: str
) -> tuple[list[Col], Callable[[Obj, float], list[Any]]]:
    if rt.key in PRINTERS:
        return PRINTERS[rt.key]
    custom = rt.printer_columns(version)
    if not custom:
        return [("Name", S, 0), ("Age", S, 0)], _default_row
    cols: list[Col] = [("Name", S, 0)]
    has_age = any(c.get("jsonPath") == ".metadata.creationTimestamp" for c in custom)
    cols += [(c["name"], c.get("type", S), int(c.get("priority", 0))) for c in custom]
    if not has_age:
        cols.append(("Age", S, 0))

    def row(o: Obj, now: float) -> list[Any]:
        cells: list[Any] = [o["metadata"]["name"]]
        for c in custom:
            value = jsonpath(o, c.get("jsonPath", ""))
            if c.get("type") == "date" and isinstance(value, str):
                created = parse_iso(value)
                value = human_age(now - created) if created is not None else value
            cells.append(value if value is not None else None)
        if not has_age:
            cells.append(_age(o, now))
        return cells

    return cols, row


def table(
    rt: ResourceType, version: str, objs: list[Obj], now: float, include: str, list_meta: Obj
) -> Obj:
    cols, row = _columns_for(rt, version)
    rows = []
    for o in objs:
        r: Obj = {"cells": row(o, now)}
        if include == "Object":
            r["object"] = o
        elif include != "None":
            r["object"] = {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": o.get("metadata", {}),
            }
        rows.append(r)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta,
        "columnDefinitions": [
            {
                "name": n,
                "type": t,
                "format": "name" if n == "Name" else "",
                "description": n,
                "priority": p,
            }
            for n, t, p in cols
        ],
        "rows": rows,
    }


_SEG = re.compile(
    r"\.([A-Za-z0-9_\-]+)|\[(\d+|\*)\]|\[\?\(@\.([A-Za-z0-9_.]+)\s*==\s*['\"]([^'\"]*)['\"]\)\]"
)


def jsonpath(obj: Any, path: str) -> Any:
    """The subset of JSONPath CRD printer columns use: .a.b, [0], [*], [?(@.k=="v")]."""
    path = path.strip().lstrip("$")
    if path.startswith("{") and path.endswith("}"):
        path = path[1:-1].lstrip("$")
    current: list[Any] = [obj]
    pos = 0
    while pos < len(path):
        m = _SEG.match(path, pos)
        if not m:
            return None
        pos = m.end()
        key, index, fkey, fval = m.groups()
        nxt: list[Any] = []
        for cur in current:
            if key is not None and isinstance(cur, dict) and key in cur:
                nxt.append(cur[key])
            elif index is not None and isinstance(cur, list):
                nxt.extend(cur if index == "*" else cur[int(index) : int(index) + 1])
            elif fkey is not None and isinstance(cur, list):
                nxt.extend(
                    c for c in cur if isinstance(c, dict) and str(jsonpath(c, "." + fkey)) == fval
                )
        current = nxt
    if not current:
        return None
    return current[0] if len(current) == 1 else ",".join(str(c) for c in current)
