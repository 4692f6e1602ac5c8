"""Just enough of the Kubernetes protobuf encoding to accept what `kubectl create <kind>`
sends for simple kinds (Namespace, ConfigMap, Secret, ServiceAccount). Everything else
gets 415 with a hint to use `kubectl apply -f`, which sends JSON."""

from __future__ import annotations

import base64
from typing import Any

from podplane_sandbox.kube.errors import KubeError

MAGIC = b"k8s\x00"
Fields = dict[int, tuple[str, str]]
OWNER: Fields = {
    1: ("kind", "str"),
    3: ("name", "str"),
    4: ("uid", "str"),
    5: ("apiVersion", "str"),
    6: ("controller", "bool"),
    7: ("blockOwnerDeletion", "bool"),
}
META: Fields = {
    1: ("name", "str"),
    2: ("generateName", "str"),
    3: ("namespace", "str"),
    5: ("uid", "str"),
    6: ("resourceVersion", "str"),
    7: ("generation", "int"),
    11: ("labels", "map:str"),
    12: ("annotations", "map:str"),
    13: ("ownerReferences", "list:owner"),
    14: ("finalizers", "list:str"),
}
REF: Fields = {1: ("kind", "str"), 2: ("namespace", "str"), 3: ("name", "str")}
KINDS: dict[str, Fields] = {
    "Namespace": {1: ("metadata", "meta"), 2: ("spec", "nsspec")},
    "ConfigMap": {
        1: ("metadata", "meta"),
        2: ("data", "map:str"),
        3: ("binaryData", "map:b64"),
        4: ("immutable", "bool"),
    },
    "Secret": {
        1: ("metadata", "meta"),
        2: ("data", "map:b64"),
        3: ("type", "str"),
        4: ("stringData", "map:str"),
        5: ("immutable", "bool"),
    },
    "ServiceAccount": {
        1: ("metadata", "meta"),
        2: ("secrets", "list:ref"),
        3: ("imagePullSecrets", "list:ref"),
        4: ("automountServiceAccountToken", "bool"),
    },
    "Pod": {1: ("metadata", "meta"), 2: ("spec", "podspec")},
    "Deployment": {1: ("metadata", "meta"), 2: ("spec", "deployspec")},
    "Job": {1: ("metadata", "meta"), 2: ("spec", "jobspec")},
    "CronJob": {1: ("metadata", "meta"), 2: ("spec", "cronspec")},
    "Service": {1: ("metadata", "meta"), 2: ("spec", "svcspec")},
    "Eviction": {1: ("metadata", "meta"), 2: ("deleteOptions", "deleteoptions")},
    "DeleteOptions": {1: ("gracePeriodSeconds", "int"), 4: ("propagationPolicy", "str")},
}
# field numbers from k8s.io/api generated.proto, for the fields kubectl's generators set
MESSAGES: dict[str, Fields] = {
    "meta": META,
    "owner": OWNER,
    "ref": REF,
    "nsspec": {1: ("finalizers", "list:str")},
    "podspec": {
        2: ("containers", "list:container"),
        3: ("restartPolicy", "str"),
        4: ("terminationGracePeriodSeconds", "int"),
        6: ("dnsPolicy", "str"),
        7: ("nodeSelector", "map:str"),
        8: ("serviceAccountName", "str"),
        10: ("nodeName", "str"),
        19: ("schedulerName", "str"),
        20: ("initContainers", "list:container"),
        22: ("tolerations", "list:toleration"),
        24: ("priorityClassName", "str"),
    },
    "container": {
        1: ("name", "str"),
        2: ("image", "str"),
        3: ("command", "list:str"),
        4: ("args", "list:str"),
        5: ("workingDir", "str"),
        6: ("ports", "list:port"),
        7: ("env", "list:env"),
        8: ("resources", "resources"),
        13: ("terminationMessagePath", "str"),
        14: ("imagePullPolicy", "str"),
        16: ("stdin", "bool"),
        18: ("tty", "bool"),
        20: ("terminationMessagePolicy", "str"),
    },
    "port": {
        1: ("name", "str"),
        2: ("hostPort", "int"),
        3: ("containerPort", "int"),
        4: ("protocol", "str"),
    },
    "env": {1: ("name", "str"), 2: ("value", "str")},
    "resources": {1: ("limits", "map:qty"), 2: ("requests", "map:qty")},
    "toleration": {
        1: ("key", "str"),
        2: ("operator", "str"),
        3: ("value", "str"),
        4: ("effect", "str"),
        5: ("tolerationSeconds", "int"),
    },
    "selector": {1: ("matchLabels", "map:str")},
    "template": {1: ("metadata", "meta"), 2: ("spec", "podspec")},
    "deployspec": {
        1: ("replicas", "int"),
        2: ("selector", "selector"),
        3: ("template", "template"),
        4: ("strategy", "strategy"),
        5: ("minReadySeconds", "int"),
        6: ("revisionHistoryLimit", "int"),
        9: ("progressDeadlineSeconds", "int"),
    },
    "strategy": {1: ("type", "str")},
    "jobspec": {
        1: ("parallelism", "int"),
        2: ("completions", "int"),
        3: ("activeDeadlineSeconds", "int"),
        4: ("selector", "selector"),
        6: ("template", "template"),
        7: ("backoffLimit", "int"),
        8: ("ttlSecondsAfterFinished", "int"),
        9: ("completionMode", "str"),
        10: ("suspend", "bool"),
    },
    "jobtemplate": {1: ("metadata", "meta"), 2: ("spec", "jobspec")},
    "cronspec": {
        1: ("schedule", "str"),
        3: ("concurrencyPolicy", "str"),
        4: ("suspend", "bool"),
        5: ("jobTemplate", "jobtemplate"),
        6: ("successfulJobsHistoryLimit", "int"),
        7: ("failedJobsHistoryLimit", "int"),
        8: ("timeZone", "str"),
    },
    "svcspec": {
        1: ("ports", "list:svcport"),
        2: ("selector", "map:str"),
        3: ("clusterIP", "str"),
        4: ("type", "str"),
    },
    "svcport": {
        1: ("name", "str"),
        2: ("protocol", "str"),
        3: ("port", "int"),
        4: ("targetPort", "intorstr"),
        5: ("nodePort", "int"),
    },
    "deleteoptions": {1: ("gracePeriodSeconds", "int"), 4: ("propagationPolicy", "str")},
    "intorstr": {1: ("type", "int"), 2: ("intVal", "int"), 3: ("strVal", "str")},
}


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    value, shift = 0, 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7


def _fields(buf: bytes) -> list[tuple[int, int | bytes]]:
    out: list[tuple[int, int | bytes]] = []
    pos = 0
    while pos < len(buf):
        tag, pos = _varint(buf, pos)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
            out.append((number, value))
        elif wire == 2:
            size, pos = _varint(buf, pos)
            out.append((number, buf[pos : pos + size]))
            pos += size
        elif wire in (1, 5):
            pos += 8 if wire == 1 else 4
        else:
            raise ValueError(f"unsupported wire type {wire}")
    return out


def _message(buf: bytes, schema: Fields) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for number, raw in _fields(buf):
        if number not in schema:
            continue
        name, kind = schema[number]
        if kind.startswith("map:"):
            entry = dict(_fields(_as_bytes(raw)))
            key = _as_bytes(entry.get(1, b"")).decode()
            obj.setdefault(name, {})[key] = _map_value(kind, entry.get(2, b""))
        elif kind.startswith("list:"):
            item = kind[5:]
            data = _as_bytes(raw)
            obj.setdefault(name, []).append(
                data.decode() if item == "str" else _message(data, MESSAGES[item])
            )
        else:
            value = _scalar(kind, raw)
            # Go writes non-pointer fields even when empty; JSON would omit them
            if value not in ("", 0, False, None) or name in KEEP_EMPTY:
                obj[name] = value
    return obj


KEEP_EMPTY = {
    "replicas",
    "parallelism",
    "completions",
    "backoffLimit",
    "suspend",
    "immutable",
    "automountServiceAccountToken",
}


def _as_bytes(raw: int | bytes) -> bytes:
    if not isinstance(raw, bytes):
        raise ValueError("expected a length-delimited field")
    return raw


def _scalar(kind: str, raw: int | bytes) -> Any:
    if kind == "str":
        return _as_bytes(raw).decode()
    if kind == "int":
        return raw
    if kind == "bool":
        return bool(raw)
    if kind == "intorstr":
        parsed = _message(_as_bytes(raw), MESSAGES["intorstr"])
        return parsed.get("strVal") if parsed.get("type") == 1 else parsed.get("intVal", 0)
    return _message(_as_bytes(raw), MESSAGES[kind])


def _map_value(kind: str, value: Any) -> str:
    if kind == "map:b64":
        return base64.b64encode(value).decode()
    if kind == "map:qty":
        return _as_bytes(dict(_fields(value)).get(1, b"")).decode()
    return str(value.decode())


def decode(body: bytes) -> dict[str, Any]:
    if not body.startswith(MAGIC):
        raise KubeError(400, "protobuf body without the k8s envelope")
    try:
        unknown = dict(_fields(body[len(MAGIC) :]))
        type_meta = dict(_fields(unknown.get(1, b"")))  # type: ignore[arg-type]
        api_version = type_meta.get(1, b"").decode()  # type: ignore[union-attr]
        kind = type_meta.get(2, b"").decode()  # type: ignore[union-attr]
        schema = KINDS.get(kind)
        if schema is None:
            raise KubeError(
                415,
                f"the sandbox accepts protobuf only for {', '.join(KINDS)}; "
                f"send {kind} as JSON (kubectl apply -f)",
                "UnsupportedMediaType",
            )
        obj = _message(unknown.get(2, b""), schema)  # type: ignore[arg-type]
    except (ValueError, IndexError, UnicodeDecodeError) as exc:
        raise KubeError(400, f"cannot decode protobuf body: {exc}") from exc
    return {"apiVersion": api_version, "kind": kind, **obj}
