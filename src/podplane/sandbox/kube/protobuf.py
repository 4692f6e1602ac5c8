"""Just enough of the Kubernetes protobuf encoding to accept what `kubectl create <kind>`
sends for simple kinds (Namespace, ConfigMap, Secret, ServiceAccount). Everything else
gets 415 with a hint to use `kubectl apply -f`, which sends JSON."""

from __future__ import annotations

import base64
from typing import Any

from podplane.sandbox.kube.errors import KubeError

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
}
MESSAGES: dict[str, Fields] = {
    "meta": META,
    "owner": OWNER,
    "ref": REF,
    "nsspec": {1: ("finalizers", "list:str")},
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
            entry = dict(_fields(raw))  # type: ignore[arg-type]
            key = entry.get(1, b"")
            value = entry.get(2, b"")
            text = (
                base64.b64encode(value).decode()
                if kind == "map:b64"  # type: ignore[arg-type]
                else value.decode()
            )  # type: ignore[union-attr]
            obj.setdefault(name, {})[key.decode()] = text  # type: ignore[union-attr]
        elif kind.startswith("list:"):
            item = kind[5:]
            decoded = raw.decode() if item == "str" else _message(raw, MESSAGES[item])  # type: ignore[union-attr, arg-type]
            obj.setdefault(name, []).append(decoded)
        elif kind == "str":
            obj[name] = raw.decode()  # type: ignore[union-attr]
        elif kind in ("int", "bool"):
            obj[name] = bool(raw) if kind == "bool" else raw
        else:
            obj[name] = _message(raw, MESSAGES[kind])  # type: ignore[arg-type]
    return obj


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
