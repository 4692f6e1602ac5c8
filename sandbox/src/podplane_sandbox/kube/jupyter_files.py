"""The files a workspace container sees under its volume mounts, for the fake Jupyter server's
contents API (fake_jupyter.py).

- A PVC that is not a Mountpoint volume (the home volume) holds files of its own, kept by the
  claim's uid in the store's persisted extras: they live as long as the claim (across stop and
  start, new pods, and a restart or restore of the sandbox) and go with it.
- A Mountpoint for S3 volume shows the bucket's objects under the PV's `prefix` option and the
  mount's subPath (s3_mounts.object_key); a file written there is a new object, written with
  the CSI driver's role; an existing object cannot be overwritten (Mountpoint doc/SEMANTICS.md:
  "files can only be written sequentially ... existing files cannot be modified" without
  `--allow-overwrite`), which Jupyter reports as a permission error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from podplane_sandbox.kube import s3_mounts

Obj = dict[str, Any]
VOLUMES = "volumes"


@dataclass
class Mount:
    path: str  # absolute mount path in the container
    claim_uid: str = ""  # a home-style volume
    s3: tuple[str, str] | None = None  # (bucket, key prefix incl. subPath) for Mountpoint
    sub: str = ""  # subPath on a home-style volume


def mounts_of(store: Any, pod: Obj, container: Obj) -> list[Mount]:
    s3 = s3_mounts.s3_volumes(store, pod) if store.buckets is not None else {}
    claims = {v["name"]: v["persistentVolumeClaim"]["claimName"]
              for v in pod["spec"].get("volumes") or [] if v.get("persistentVolumeClaim")}
    ns = pod["metadata"]["namespace"]
    out = []
    for m in container.get("volumeMounts") or []:
        path = "/" + m["mountPath"].strip("/")
        if m["name"] in s3:
            out.append(Mount(path, s3=s3_mounts.object_key(s3[m["name"]], m, "")))
        elif m["name"] in claims:
            pvc = store.find("persistentvolumeclaims", ns, claims[m["name"]])
            if pvc is not None:
                out.append(Mount(path, claim_uid=pvc["metadata"]["uid"],
                                 sub=(m.get("subPath") or "").strip("/")))
    return sorted(out, key=lambda x: len(x.path), reverse=True)


def home_files(store: Any, mount: Mount) -> dict[str, Obj]:
    volume = store.extras.setdefault(VOLUMES, {}).setdefault(mount.claim_uid, {})
    return volume  # type: ignore[no-any-return]


def forget_claims(store: Any) -> None:
    """Drop files of claims that no longer exist (their volume went with them)."""
    live = {p["metadata"]["uid"] for p in store.items("persistentvolumeclaims")}
    volumes = store.extras.get(VOLUMES) or {}
    for uid in [u for u in volumes if u not in live]:
        del volumes[uid]
        store.dirty = True


def listing(store: Any, mount: Mount, rel: str) -> dict[str, int | None] | None:
    """Entries directly under `rel` of a mount: name -> size (None for a directory); None
    when `rel` is not a directory there."""
    keys = _keys(store, mount)
    base = (rel.strip("/") + "/") if rel.strip("/") else ""
    out: dict[str, int | None] = {}
    for key, size in keys.items():
        if not key.startswith(base):
            continue
        head, sep, _ = key[len(base):].partition("/")
        out[head] = None if sep else size
    return out if out or not base else None


def _keys(store: Any, mount: Mount) -> dict[str, int]:
    if mount.s3 is not None:
        bucket, prefix = mount.s3
        prefix = prefix if not prefix or prefix.endswith("/") else prefix + "/"
        source = store.buckets.source
        return {k[len(prefix):]: len(source.s3_object(bucket, k) or b"")
                for k in source.s3_keys(bucket, prefix) if not k.endswith("/")}
    files = home_files(store, mount)
    sub = mount.sub + "/" if mount.sub else ""
    return {k[len(sub):]: len(v["content"]) for k, v in files.items() if k.startswith(sub)}


def read(store: Any, mount: Mount, rel: str) -> str | None:
    if mount.s3 is not None:
        bucket, prefix = mount.s3
        data = store.buckets.source.s3_object(bucket, _join(prefix, rel))
        return data.decode(errors="replace") if data is not None else None
    found = home_files(store, mount).get(_join(mount.sub, rel))
    return str(found["content"]) if found is not None else None


def write(store: Any, mount: Mount, rel: str, text: str) -> str | None:
    """The refusal's text, else None once written."""
    if mount.s3 is not None:
        bucket, prefix = mount.s3
        key = _join(prefix, rel)
        mounts = store.buckets
        if mounts.source.s3_object(bucket, key) is not None:
            return "Operation not permitted (Mountpoint does not overwrite existing objects)"
        role = mounts.source.pod_identity_role(mounts.cluster, s3_mounts.CSI_NAMESPACE,
                                               s3_mounts.CSI_ACCOUNT)
        return mounts.source.put_s3_object(bucket, key, text.encode(), role or "")  # type: ignore[no-any-return]
    home_files(store, mount)[_join(mount.sub, rel)] = {"content": text}
    store.dirty = True
    return None


def _join(prefix: str, rel: str) -> str:
    rel = rel.strip("/")
    if not prefix:
        return rel
    return prefix + rel if prefix.endswith("/") else f"{prefix}/{rel}"
