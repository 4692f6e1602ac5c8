"""The model download container as the sandbox kubelet runs it, against a small in-memory
node and bucket: the hub's answers, Mountpoint's refusals (rename, overwrite, IAM), the
node's egress, and the token read from the Secret the env refers to."""

from __future__ import annotations

import base64
from typing import Any

from podplane_sandbox.kube import container_shell, model_hub, s3_mounts

SCRIPT = ('huggingface-cli download "$MODEL_REPO" --revision main --local-dir /scratch/m '
          "&& rm -rf /scratch/m/.cache && cp -r /scratch/m/. /dest/")
TOKEN = "hf_" + "a" * 34


class Bucket:
    def __init__(self, blocked: str | None = None, allowed: bool = True) -> None:
        self.objects: dict[str, bytes] = {}
        self.blocked, self.allowed = blocked, allowed

    def s3_object(self, bucket: str, key: str) -> bytes | None:
        return self.objects.get(key)

    def s3_keys(self, bucket: str, prefix: str) -> list[str]:
        return sorted(k for k in self.objects if k.startswith(prefix))

    def put_s3_object(self, bucket: str, key: str, data: bytes, role: str) -> str | None:
        if not self.allowed:
            return f"AccessDenied: {role} is not authorized to perform: s3:PutObject"
        self.objects[key] = data
        return None

    def pod_identity_role(self, *_: Any) -> str:
        return "arn:aws:iam::000000000000:role/csi"

    def internet_blocked(self, node: Any) -> str | None:
        return self.blocked


class Store:
    def __init__(self, secret: str | None) -> None:
        self.secret = secret

    def find(self, rt: str, ns: str, name: str) -> Any:
        if rt == "secrets" and self.secret is not None:
            return {"data": {"HF_TOKEN": base64.b64encode(self.secret.encode()).decode()}}
        return {"metadata": {"name": name}} if rt == "nodes" else None


class Mounts(s3_mounts.S3Mounts):
    def _s3_volumes(self, pod: Any) -> dict[str, tuple[str, str]]:
        return {"bucket": ("podplane-b", "")}   # (bucket, the PV's prefix option)


def run(repo: str, bucket: Bucket, secret: str | None = None,
        script: str = SCRIPT) -> tuple[int | None, str]:
    ctx: Any = type("Ctx", (), {})()
    ctx.store = Store(secret)
    ctx.s3_mounts = Mounts(ctx.store, bucket, "eks")
    env = [{"name": "MODEL_REPO", "value": repo}]
    if secret is not None:
        env.append({"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "s",
                                                                       "key": "HF_TOKEN"}}})
    pod = {"metadata": {"uid": f"u-{repo}-{secret}-{len(script)}", "namespace": "default"},
           "spec": {"nodeName": "n1", "containers": [{
               "name": "download", "command": ["/bin/sh", "-c", script], "env": env,
               "volumeMounts": [{"name": "bucket", "mountPath": "/dest",
                                 "subPath": "models/m"},
                                {"name": "scratch", "mountPath": "/scratch"}]}]}}
    code = container_shell.run(ctx, pod)
    return code, s3_mounts.command_output(pod, "download") or ""


def test_a_public_repo_lands_as_new_objects_without_the_clients_cache() -> None:
    bucket = Bucket()
    code, out = run(model_hub.PUBLIC, bucket)
    assert code == 0, out
    assert sorted(bucket.objects) == ["models/m/config.json", "models/m/model.safetensors",
                                      "models/m/tokenizer.json"]


def test_the_hubs_refusals() -> None:
    assert "GatedRepoError: 401" in run(model_hub.GATED, Bucket())[1]
    assert run(model_hub.GATED, Bucket(), TOKEN)[0] == 0
    assert "401" in run(model_hub.GATED, Bucket(), "not-a-token")[1]
    assert "RepositoryNotFoundError: 401" in run("org/missing", Bucket())[1]
    assert "RepositoryNotFoundError: 404" in run("org/missing", Bucket(), TOKEN)[1]


def test_mountpoint_and_network_refusals() -> None:
    code, out = run(model_hub.PUBLIC, Bucket(blocked="no route to the internet"))
    assert code == 1 and "huggingface.co" in out and "no route" in out
    code, out = run(model_hub.PUBLIC, Bucket(allowed=False))
    assert code == 1 and "AccessDenied" in out
    full = Bucket()
    full.objects["models/m/config.json"] = b"{}"
    code, out = run(model_hub.PUBLIC, full)
    assert code == 1 and "Operation not permitted" in out  # no --allow-overwrite
    straight = 'huggingface-cli download "$MODEL_REPO" --local-dir /dest'
    code, out = run(model_hub.PUBLIC, Bucket(), script=straight)
    assert code == 1 and "rename" in out  # Mountpoint does not rename


def test_other_containers_are_left_alone() -> None:
    code, _ = run(model_hub.PUBLIC, Bucket(), script="python3 train.py")
    assert code is None
