"""What a container's `sh -c "a && b && c"` does to files, for the few commands a model
download runs: `huggingface-cli download` (model_hub.py), `rm -rf` and `cp -r`.

The kubelet calls `run` when such a container exits; other containers are untouched (None).
Paths resolve through the container's volumeMounts: an emptyDir (or the image's own file
system) is local to the pod; a Mountpoint for S3 volume (s3_mounts.py) reads and writes objects
at `<subPath>/<file>` with the CSI driver's Pod Identity role, under Mountpoint's rules
(awslabs/mountpoint-s3, doc/SEMANTICS.md): new files are written once, sequentially; an
existing object cannot be opened for writing without `--allow-overwrite`; rename is not
supported. `&&` stops at the first failing command (POSIX shell, "AND lists").
Environment values come from `value` or `valueFrom.secretKeyRef` (the Secret's `data`,
base64), as the kubelet sets them (Kubernetes docs, "Secrets").
"""

from __future__ import annotations

import base64
import posixpath
import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from podplane_sandbox.kube import model_hub, s3_mounts

Obj = dict[str, Any]
COMMANDS = ("huggingface-cli", "hf", "cp", "rm")
VAR = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?")


class Failed(Exception):
    pass


@dataclass
class Shell:
    ctx: Any
    pod: Obj
    container: Obj
    env: dict[str, str]
    local: dict[str, bytes] = field(default_factory=dict)
    out: list[str] = field(default_factory=list)

    # -- paths ---------------------------------------------------------------------------
    def where(self, path: str) -> tuple[str, str | None]:
        """(key, bucket): a path on an S3 mount becomes (object key, bucket); else (path,
        None)."""
        path = posixpath.normpath(path)
        volumes = self.ctx.s3_mounts._s3_volumes(self.pod) if self._mounts() else {}
        best = None
        for m in self.container.get("volumeMounts") or []:
            root = posixpath.normpath(m["mountPath"])
            if (path == root or path.startswith(root + "/")) and \
                    (best is None or len(root) > len(best[0])):
                best = (root, m)
        if best is None or best[1]["name"] not in volumes:
            return path, None
        # the PV's prefix option and the mount's subPath (s3_mounts.object_key)
        bucket, key = s3_mounts.object_key(volumes[best[1]["name"]], best[1],
                                           path[len(best[0]):])
        return key, bucket

    def _mounts(self) -> bool:
        return getattr(self.ctx, "s3_mounts", None) is not None

    def files_under(self, path: str) -> dict[str, bytes]:
        """Relative name -> bytes of every file under `path`."""
        key, bucket = self.where(path)
        if bucket is None:
            return {k[len(key) + 1:]: v for k, v in self.local.items()
                    if k.startswith(key + "/")}
        source = self.ctx.s3_mounts.source
        keys = source.s3_keys(bucket, key + "/") if hasattr(source, "s3_keys") else []
        refusal = getattr(source, "s3_refusal", None)
        role = source.pod_identity_role(self.ctx.s3_mounts.cluster, s3_mounts.CSI_NAMESPACE,
                                        s3_mounts.CSI_ACCOUNT)
        for k in keys:  # each file is a GetObject with the driver's role
            if refusal is not None and refusal(bucket, k, role) is not None:
                raise Failed(f"cp: cannot open '{path}/{k[len(key) + 1:]}' for reading: "
                             "Permission denied")
        return {k[len(key) + 1:]: source.s3_object(bucket, k) or b"" for k in keys}

    def write(self, path: str, data: bytes) -> None:
        key, bucket = self.where(path)
        if bucket is None:
            self.local[key] = data
            return
        mounts = self.ctx.s3_mounts
        if mounts.source.s3_object(bucket, key) is not None:
            raise Failed(f"cp: cannot create regular file '{path}': Operation not permitted")
        role = mounts.source.pod_identity_role(mounts.cluster, s3_mounts.CSI_NAMESPACE,
                                               s3_mounts.CSI_ACCOUNT) or ""
        error = mounts.source.put_s3_object(bucket, key, data, role)
        if error is not None:
            raise Failed(f"cp: error writing '{path}': Input/output error ({error})")

    def expand(self, word: str) -> str:
        """$VAR and ${VAR} from the container's environment (unset: empty)."""
        return VAR.sub(lambda m: self.env.get(m.group(1), ""), word)

    # -- commands ------------------------------------------------------------------------
    def run(self, argv: list[str]) -> None:
        name = argv[0].rsplit("/", 1)[-1]
        if name in ("huggingface-cli", "hf") and argv[1:2] == ["download"]:
            self.hub_download(argv[2:])
        elif name == "cp":
            self.copy(argv[1:])
        elif name == "rm":
            self.remove(argv[1:])
        else:
            raise Failed(f"sh: {argv[0]}: not found")

    def hub_download(self, args: list[str]) -> None:
        opts, rest = _options(args, ("--revision", "--local-dir", "--token"))
        if not rest:
            raise Failed("huggingface-cli download: error: the following arguments are "
                         "required: repo_id")
        node = self.ctx.store.find("nodes", "", self.pod["spec"].get("nodeName", ""))
        source = self.ctx.s3_mounts.source if self._mounts() else None
        blocked = getattr(source, "internet_blocked", None)
        why = blocked(node) if blocked is not None and node is not None else None
        if why:
            raise Failed(f"requests.exceptions.ConnectionError: could not connect to "
                         f"https://{model_hub.HOST} ({why})")
        try:
            files = model_hub.download(rest[0], opts.get("--revision"),
                                       opts.get("--token") or self.env.get("HF_TOKEN"))
        except model_hub.HubError as err:
            raise Failed(str(err)) from None
        local_dir = opts.get("--local-dir")
        if local_dir is None:
            raise Failed("sandbox: only --local-dir downloads are emulated")
        self.out.append(f"Fetching {len(files)} files")
        for name, data in sorted(files.items()):
            if self.where(local_dir)[1] is not None:  # write, then rename: Mountpoint refuses
                raise Failed(f"OSError: [Errno 38] Function not implemented: rename to "
                             f"'{local_dir}/{name}'")
            self.write(f"{local_dir}/.cache/huggingface/download/{name}.metadata", b"meta")
            self.write(f"{local_dir}/{name}", data)
        self.out.append(local_dir)

    def copy(self, args: list[str]) -> None:
        flags = [a for a in args if a.startswith("-")]
        paths = [a for a in args if not a.startswith("-")]
        if len(paths) != 2 or not any("r" in f.lower() for f in flags):
            raise Failed("sandbox: only `cp -r SRC DST` is emulated")
        src, dst = paths
        if src.endswith("/."):  # the directory's contents
            base, into = src[:-2], dst
        else:
            base, into = src, posixpath.join(dst, posixpath.basename(src.rstrip("/")))
        for name, data in sorted(self.files_under(base).items()):
            self.write(posixpath.join(into, name), data)

    def remove(self, args: list[str]) -> None:
        for path in (a for a in args if not a.startswith("-")):
            key, bucket = self.where(path)
            if bucket is not None:
                raise Failed("sandbox: rm on a Mountpoint volume is not emulated")
            for k in [k for k in self.local if k == key or k.startswith(key + "/")]:
                del self.local[k]


def _options(args: list[str], named: tuple[str, ...]) -> tuple[dict[str, str], list[str]]:
    opts, rest, i = {}, [], 0
    while i < len(args):
        if args[i] in named and i + 1 < len(args):
            opts[args[i]] = args[i + 1]
            i += 2
            continue
        rest.append(args[i])
        i += 1
    return opts, rest


def _env(ctx: Any, pod: Obj, container: Obj) -> dict[str, str]:
    ns = pod["metadata"].get("namespace", "default")
    env = {}
    for e in container.get("env") or []:
        ref = (e.get("valueFrom") or {}).get("secretKeyRef")
        if ref:
            secret = ctx.store.find("secrets", ns, ref.get("name", "")) or {}
            raw = (secret.get("data") or {}).get(ref.get("key", ""))
            if raw is not None:
                env[e["name"]] = base64.b64decode(raw).decode(errors="replace")
        elif "value" in e:
            env[e["name"]] = str(e["value"])
    return env


def _script(container: Obj) -> list[list[str]] | None:
    argv = list(container.get("command") or []) + list(container.get("args") or [])
    if len(argv) != 3 or argv[0] not in ("sh", "/bin/sh", "bash", "/bin/bash") or \
            argv[1] != "-c":
        return None
    steps = [shlex.split(part) for part in argv[2].split("&&")]
    if not steps or any(not s or s[0].rsplit("/", 1)[-1] not in COMMANDS for s in steps):
        return None
    return steps


def run(ctx: Any, pod: Obj) -> int | None:
    """The exit code of the first such container (its output kept as its log), or None."""
    for container in pod["spec"].get("containers") or []:
        steps = _script(container)
        if steps is None:
            continue
        shell = Shell(ctx, pod, container, _env(ctx, pod, container))
        code = 0
        try:
            for argv in steps:
                shell.run([shell.expand(a) for a in argv])
        except Failed as err:
            shell.out.append(str(err))
            code = 1
        s3_mounts.record_output(pod, container["name"], "\n".join(shell.out))
        return code
    return None
