"""List 1,000 nodes and 10,000 pods through the sandbox's Kubernetes API emulator and time it
next to the same lists done by kubectl, in one run.

    .venv/bin/python bench/kube_list.py [--nodes 1000] [--pods 10000]

"emulator" is the HTTP round trip of a plain JSON list (what controllers and our adapter do),
paged the way kubectl pages (limit=500); "kubectl" is the wall time of `kubectl get`, which
asks for server-side Table output and prints it. The ratio says how much of kubectl's time
is the emulator's.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from podplane_sandbox.clock import VirtualClock  # noqa: E402
from podplane_sandbox.contracts import SandboxNode  # noqa: E402
from podplane_sandbox.kube import KubeApiServer, start_kube_api  # noqa: E402

KUBECTL = os.environ.get(
    "KUBECTL", str(Path(sys.executable).parent / "kubectl"))


class ManyNodes:
    def __init__(self, count: int) -> None:
        self.nodes = [
            SandboxNode(
                "bench",
                "bench",
                f"group-{i // 100}",
                f"i-0{i:016x}",
                "ml.p5.48xlarge",
                "us-west-2a",
                "Running",
            )
            for i in range(count)
        ]

    def sandbox_nodes(self, eks_cluster_name: str | None = None) -> list[SandboxNode]:
        return self.nodes


def seed_pods(api: KubeApiServer, count: int, nodes: int) -> None:
    rt = api.registry.by_key("pods")
    assert rt is not None
    for i in range(count):
        api.store.create(
            rt,
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"worker-{i:05d}",
                    "namespace": "default",
                    "labels": {"app": f"a{i % 50}"},
                },
                "spec": {
                    "nodeName": f"hyperpod-i-0{i % nodes:016x}",
                    "containers": [
                        {"name": "main", "image": "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"}
                    ],
                },
            },
        )


def emulator_list(client: httpx.Client, path: str) -> tuple[float, int]:
    start, items, token = time.perf_counter(), 0, ""
    while True:
        page = client.get(path, params={"limit": 500, "continue": token}).json()
        items += len(page["items"])
        token = page["metadata"].get("continue", "")
        if not token:
            return time.perf_counter() - start, items


def kubectl_list(env: dict[str, str], *args: str) -> tuple[float, int]:
    start = time.perf_counter()
    out = subprocess.run(
        [KUBECTL, "get", *args, "--no-headers"], env=env, check=True, capture_output=True, text=True
    ).stdout
    return time.perf_counter() - start, len(out.splitlines())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--pods", type=int, default=10000)
    args = parser.parse_args()
    state = Path(tempfile.mkdtemp(prefix="kube-bench-"))
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    call = lambda coro: asyncio.run_coroutine_threadsafe(coro, loop).result(600)  # noqa: E731
    api = start_kube_api(state, VirtualClock(speed=0), ManyNodes(args.nodes), "127.0.0.1", 0)

    async def boot() -> None:
        await api.start()
        await api.settle()
        seed_pods(api, args.pods, args.nodes)
        await api.settle()
        await api.flush()  # so the periodic snapshot does not run during timing

    t0 = time.perf_counter()
    call(boot())
    print(f"seeded {args.nodes} nodes and {args.pods} pods in {time.perf_counter() - t0:.1f}s")
    env = {**os.environ, "KUBECONFIG": str(api.kubeconfig_path), "HOME": str(state)}
    ca = ssl.create_default_context(cafile=str(state / "kube-ca.crt"))
    with httpx.Client(
        base_url=api.endpoint,
        verify=ca,
        timeout=120,
        headers={"Authorization": "Bearer " + api.token()},
    ) as client:
        kubectl_list(env, "namespaces")  # warm kubectl's discovery cache
        rows = [
            ("nodes", emulator_list(client, "/api/v1/nodes"), kubectl_list(env, "nodes")),
            ("pods -A", emulator_list(client, "/api/v1/pods"), kubectl_list(env, "pods", "-A")),
            (
                "pods -A -o name",
                emulator_list(client, "/api/v1/pods"),
                kubectl_list(env, "pods", "-A", "-o", "name"),
            ),
        ]
    print(f"{'list':<18}{'items':>7}{'emulator s':>12}{'kubectl s':>11}{'emu/kubectl':>13}")
    for name, (emu_s, emu_n), (kc_s, kc_n) in rows:
        assert emu_n == kc_n, (name, emu_n, kc_n)
        print(f"{name:<18}{emu_n:>7}{emu_s:>12.3f}{kc_s:>11.3f}{emu_s / kc_s:>13.2f}")
    call(api.stop())


if __name__ == "__main__":
    main()
