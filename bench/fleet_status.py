"""Fleet-scale performance of podplane against the sandbox, every figure measured in one run
(issue 21). Prints ratios, never pass/fail.

    nice .venv/bin/python bench/fleet_status.py [--groups 10 --per-group 100]
        [--soak 120] [--wrk-seconds 10] [--only status,watchers,rest,soak,kubewatch]

1. status and node list of a 1,000-node cluster: podplane (observation cache on, and off in
   the same run) vs the shell-out anchor (AWS CLI + kubectl processes, one after the other,
   joined with podplane's own join so only the fetching differs);
2. 1, 10 and 100 watchers of one operation (each: long-poll the operation, read the cluster's
   status and node list with If-None-Match, as a console tab does) -> cloud reads per 2 s;
3. REST reads (authenticated GET /api/v1/operations?limit=20) by wrk at 10 and 200 clients;
4. idle and loaded RSS of `podplane serve`; a bounded soak with 50 watchers (default 120 s);
5. Kubernetes lists per interval under 10 watchers, re-listed vs kept by a watch (two control
   planes, PODPLANE_OBSERVE_WATCH=0 and 1).
The sandbox runs on a thread of this process (its clock frozen); the control plane is a real
`podplane serve` subprocess, so its RSS and CPU are its own.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path[:0] = [str(Path(__file__).resolve().parent)]

import cloud_reads  # noqa: E402
import sandbox_fleet  # noqa: E402
from tests.served import ControlPlane  # noqa: E402
from tools import NO_RATE_LIMIT, cpu_seconds, get_ok, p50, rss_mb, timed, wrk  # noqa: E402

from podplane.domain.dependencies import CORE_UNITS  # noqa: E402
from podplane.services.groups.steps import CLUSTER_LABEL, instance_id  # noqa: E402
from podplane.services.nodes import views  # noqa: E402

INTERVAL = 2.0  # the observation cache's fast interval (PODPLANE_OBSERVE_SECONDS default)


def serve(home: Path, fleet: sandbox_fleet.Fleet, observe: float,
          watch: bool = True, env: dict[str, str] | None = None) -> tuple[ControlPlane, str]:
    cp = ControlPlane(home, extra_env={
        "PODPLANE_AWS_ENDPOINT_URL": fleet.stack.aws_url, "PODPLANE_OBSERVE_SECONDS": str(observe),
        "PODPLANE_OBSERVE_WATCH": "1" if watch else "0",
        "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", **NO_RATE_LIMIT,
        **(env or {})})
    cp.home.mkdir(parents=True, exist_ok=True)
    asyncio.run(sandbox_fleet.register(f"sqlite:///{home / 'podplane.db'}", fleet))
    cp.start()
    return cp, cp.token("bench")


# -- 1. status and node list vs the shell-out anchor --------------------------------------

def anchor_env(fleet: sandbox_fleet.Fleet, home: Path) -> dict[str, str]:
    return {**os.environ, "AWS_ENDPOINT_URL": fleet.stack.aws_url, "AWS_ACCESS_KEY_ID": "test",
            "AWS_SECRET_ACCESS_KEY": "test", "AWS_DEFAULT_REGION": "us-west-2",
            "AWS_PAGER": "", "KUBECONFIG": str(fleet.sandbox.kube.kubeconfig_path),
            "HOME": str(home)}


def shell(env: dict[str, str], *argv: str) -> Any:
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    return json.loads(done.stdout) if done.stdout.strip() else None


def anchor_nodes(env: dict[str, str], name: str) -> int:
    """The node view the way a shell script builds it: four processes, then the join."""
    aws, kubectl = shutil.which("aws") or "aws", shutil.which("kubectl") or "kubectl"
    described = shell(env, aws, "sagemaker", "describe-cluster", "--cluster-name", name)
    summaries = shell(env, aws, "sagemaker", "list-cluster-nodes", "--cluster-name", name)
    nodes = shell(env, kubectl, "get", "nodes", "-l", f"{CLUSTER_LABEL}={name}", "-o", "json")
    pods = shell(env, kubectl, "get", "pods", "-A", "-o", "json")
    joined = views.join(summaries["ClusterNodeSummaries"],
                        {instance_id(n): n for n in nodes["items"]},
                        views.pods_by_node(pods["items"]), described.get("NodeRecovery"))
    return len(joined)


def anchor_status(env: dict[str, str], name: str) -> None:
    """The cluster status the same way: EKS, HyperPod, each core add-on, the manifests."""
    aws, kubectl = shutil.which("aws") or "aws", shutil.which("kubectl") or "kubectl"
    shell(env, aws, "eks", "describe-cluster", "--name", name)
    shell(env, aws, "sagemaker", "describe-cluster", "--cluster-name", name)
    shell(env, aws, "eks", "list-addons", "--cluster-name", name)
    for unit in CORE_UNITS:
        if unit.kind == "eks-addon":
            subprocess.run([aws, "eks", "describe-addon", "--cluster-name", name,
                            "--addon-name", unit.name], env=env, capture_output=True)
    shell(env, kubectl, "get", "daemonsets,deployments", "-A", "-o", "json")


def status_vs_anchor(url: str, token: str, fleet: sandbox_fleet.Fleet, home: Path,
                     label: str, runs: int, anchor: dict[str, float]) -> dict[str, float]:
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"},
                      timeout=120) as api:
        status_path, nodes_path = f"/api/v1/clusters/{fleet.name}", \
            f"/api/v1/clusters/{fleet.name}/nodes"
        count = len(get_ok(api, nodes_path).json())
        status = timed(lambda: get_ok(api, status_path), runs)
        nodes = timed(lambda: get_ok(api, nodes_path), runs)
        page = timed(lambda: get_ok(api, nodes_path, limit=100, health="healthy"), runs)
    if not anchor:
        env = anchor_env(fleet, home)
        anchor["status"] = p50(timed(lambda: anchor_status(env, fleet.name), 3))
        anchor["nodes"] = p50(timed(lambda: anchor_nodes(env, fleet.name), 3))
        print(f"anchor (AWS CLI {_version('aws')}, kubectl, sequential processes): "
              f"status p50 {anchor['status']:.0f} ms, node list p50 {anchor['nodes']:.0f} ms")
    out = {"status": p50(status), "nodes": p50(nodes), "page": p50(page)}
    print(f"[{label}] {count} nodes: status p50 {out['status']:.1f} ms "
          f"(anchor/podplane {anchor['status'] / out['status']:.0f}x), node list p50 "
          f"{out['nodes']:.1f} ms ({anchor['nodes'] / out['nodes']:.0f}x), one filtered page "
          f"of 100 p50 {out['page']:.1f} ms", flush=True)
    return out


def _version(tool: str) -> str:
    done = subprocess.run([tool, "--version"], capture_output=True, text=True)
    return (done.stdout or done.stderr).split()[0].split("/")[-1] if done.returncode == 0 else "?"


# -- 2. watchers of one operation -> cloud reads per interval ------------------------------

async def watcher(url: str, token: str, cluster: str, op_id: str, until: float) -> int:
    rounds, etag, revision = 0, None, None
    async with httpx.AsyncClient(base_url=url, timeout=60,
                                 headers={"Authorization": f"Bearer {token}"}) as api:
        while time.monotonic() < until:
            await api.get(f"/api/v1/clusters/{cluster}")
            r = await api.get(f"/api/v1/clusters/{cluster}/nodes",
                              headers={"If-None-Match": etag} if etag else {})
            etag = r.headers.get("ETag", etag)
            params: dict[str, Any] = {"timeout": INTERVAL}
            if revision is not None:
                params["revision"] = revision
            op = (await api.get(f"/api/v1/operations/{op_id}/wait", params=params)).json()
            revision = op.get("revision")
            rounds += 1
    return rounds


def watch(url: str, token: str, cluster: str, op_id: str, n: int, seconds: float,
          pid: int) -> tuple[float, int, float]:
    """Cloud reads per interval while n watchers watch; rounds done; peak RSS (MB)."""
    before, counts = cloud_reads.reads(), cloud_reads.COUNTS.copy()
    peak = 0.0

    async def run() -> int:
        nonlocal peak
        until = time.monotonic() + seconds
        tasks = [asyncio.create_task(watcher(url, token, cluster, op_id, until))
                 for _ in range(n)]
        while not all(t.done() for t in tasks) or time.monotonic() < until:  # n = 0: idle
            peak = max(peak, rss_mb(pid))
            await asyncio.sleep(1)
        return sum(t.result() for t in tasks)

    cpu, bench_cpu, start = cpu_seconds(pid), time.process_time(), time.monotonic()
    rounds = asyncio.run(run())
    if os.environ.get("BENCH_READS"):  # which reads (top ten per interval), who was busy
        made = cloud_reads.COUNTS - counts
        wall = time.monotonic() - start
        print("   ", ", ".join(f"{k} {v / (seconds / INTERVAL):.1f}"
                             for k, v in made.most_common(10)),
              f"| CPU: server {100 * (cpu_seconds(pid) - cpu) / wall:.0f}%, bench (watchers "
              f"+ sandbox) {100 * (time.process_time() - bench_cpu) / wall:.0f}%", flush=True)
    return (cloud_reads.reads() - before) / (seconds / INTERVAL), rounds, peak


def watchers(url: str, token: str, cluster: str, op_id: str, seconds: float,
             pid: int) -> None:
    """0, 1, 10 and 100 watchers. The running operation polls the cloud on its own schedule,
    watched or not: the 0-watcher run measures that, and what the watchers add is the rest."""
    idle = one = 0.0
    for n in (0, 1, 10, 100):
        per, rounds, peak = watch(url, token, cluster, op_id, n, seconds, pid)
        added = per - idle
        if n == 0:
            idle = per
            print(f"  0 watchers (the operation's own polling): {per:.1f} cloud reads per "
                  f"{INTERVAL:.0f} s interval", flush=True)
            continue
        one = one or added
        print(f"{n:>3} watchers of one operation: {per:.1f} cloud reads per {INTERVAL:.0f} s "
              f"interval, {added:.1f} more than none ({added / max(one, 1e-9):.2f}x one "
              f"watcher's), {rounds} watch rounds ({rounds / n / (seconds / INTERVAL):.2f} "
              f"per watcher per interval), peak RSS {peak:.0f} MB", flush=True)


def start_operation(url: str, token: str, cluster: str) -> str:
    """A node reboot: runs while the frozen sandbox clock keeps the node rebooting."""
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"},
                      timeout=60) as api:
        node = get_ok(api, f"/api/v1/clusters/{cluster}/nodes", limit=1,  # not one rebooting
                      health="healthy").json()[0]["id"]
        r = api.post(f"/api/v1/clusters/{cluster}/nodes/{node}/reboot")
        assert r.status_code == 202, r.text
        return str(r.json()["operation"]["id"] if "operation" in r.json() else r.json()["id"])


def kube_watch(fleet: sandbox_fleet.Fleet, home: Path, seconds: float) -> None:
    """10 watchers, Kubernetes lists per interval: re-listed each interval vs kept by a watch
    (services/observe/informer.py), two control planes in the same run."""
    figures = {}
    for watch_on in (False, True):
        cp, token = serve(home / f"cp-watch-{int(watch_on)}", fleet, INTERVAL, watch=watch_on)
        try:
            op_id = start_operation(cp.url, token, fleet.name)
            lists = cloud_reads.COUNTS["kube:list_objects"]
            per, rounds, _ = watch(cp.url, token, fleet.name, op_id, 10, seconds,
                                   cp.proc.pid)  # type: ignore[union-attr]
            figures[watch_on] = (cloud_reads.COUNTS["kube:list_objects"] - lists) \
                / (seconds / INTERVAL)
            print(f"10 watchers, Kubernetes {'watch' if watch_on else 're-list'}: "
                  f"{figures[watch_on]:.2f} Kubernetes lists and {per:.1f} cloud reads per "
                  f"{INTERVAL:.0f} s, {rounds} rounds", flush=True)
        finally:
            cp.stop()
    print(f"  lists per interval, watch / re-list = "
          f"{figures[True] / max(figures[False], 1e-9):.3f}", flush=True)


# -- 3. REST throughput ---------------------------------------------------------------------

# The runtime podplane ran before ADR 0011: uvloop and Python's collector untouched (no
# frozen heap, young collections every 700 allocations), measured against today's default in
# the same run.
OLD_RUNTIME = {"PODPLANE_EVENT_LOOP": "uvloop", "PODPLANE_YOUNG_GC_THRESHOLD": "0"}


def rest_side_by_side(cp: ControlPlane, token: str, fleet: sandbox_fleet.Fleet, home: Path,
                      seconds: int) -> None:
    pid = cp.proc.pid  # type: ignore[union-attr]
    ours = rest("default runtime", cp.url, token, seconds, pid)
    print(f"RSS after load: {rss_mb(pid):.0f} MB", flush=True)
    old, old_token = serve(home / "cp-old-runtime", fleet, INTERVAL, env=OLD_RUNTIME)
    try:
        start_operation(old.url, old_token, fleet.name)  # the same background work as `cp`
        before = rest("uvloop, collector untouched", old.url, old_token, seconds,
                      old.proc.pid)  # type: ignore[union-attr]
    finally:
        old.stop()
    print(f"  p99 at 200 clients, default / old runtime = "
          f"{ours['p99_ms'] / before['p99_ms']:.2f}; req/s = "
          f"{ours['rps'] / before['rps']:.2f}", flush=True)


def rest(label: str, url: str, token: str, seconds: int, pid: int) -> dict[str, Any]:
    target = f"{url}/api/v1/operations?limit=20"
    for clients in (10, 200):
        got = wrk(target, token, clients, seconds, server_pid=pid)
        print(f"REST GET /operations?limit=20 [{label}], {clients} clients (wrk -t2, {seconds} "
              f"s): {got['rps']:.0f} req/s, p50 {got['p50_ms']:.1f} ms, p99 "
              f"{got['p99_ms']:.1f} ms, errors {got['errors']}, server CPU "
              f"{got['cpu_ms']:.2f} ms/request", flush=True)
    health = wrk(f"{url}/api/v1/health", token, 200, seconds)
    print(f"  same server, GET /health at 200 clients: {health['rps']:.0f} req/s, "
          f"p50 {health['p50_ms']:.1f} ms, p99 {health['p99_ms']:.1f} ms, errors "
          f"{health['errors']} (operations / health req/s = {got['rps'] / health['rps']:.2f})",
          flush=True)
    return got


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--groups", type=int, default=10)
    parser.add_argument("--per-group", type=int, default=100)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--watch-seconds", type=float, default=20)
    parser.add_argument("--wrk-seconds", type=int, default=10)
    parser.add_argument("--soak", type=float, default=120)
    parser.add_argument("--only", default="status,watchers,rest,soak,kubewatch")
    args = parser.parse_args()
    only = set(args.only.split(","))
    home = Path(tempfile.mkdtemp(prefix="bench-fleet-"))
    cloud_reads.install()
    fleet = sandbox_fleet.build(home, args.groups, args.per_group)
    anchor: dict[str, float] = {}
    try:
        if "status" in only:
            off, off_token = serve(home / "cp-off", fleet, 0)
            try:
                status_vs_anchor(off.url, off_token, fleet, home, "cache off", args.runs, anchor)
            finally:
                off.stop()
        if "kubewatch" in only:
            kube_watch(fleet, home, args.watch_seconds)
        cp, token = serve(home / "cp", fleet, INTERVAL)
        pid = cp.proc.pid  # type: ignore[union-attr]
        try:
            time.sleep(3)
            print(f"idle RSS of podplane serve: {rss_mb(pid):.0f} MB", flush=True)
            if "status" in only:
                status_vs_anchor(cp.url, token, fleet, home, "cache on", args.runs, anchor)
            op_id = start_operation(cp.url, token, fleet.name)
            if "watchers" in only:
                watchers(cp.url, token, fleet.name, op_id, args.watch_seconds, pid)
            if "rest" in only:
                rest_side_by_side(cp, token, fleet, home, args.wrk_seconds)
            if "soak" in only:
                old, old_token = serve(home / "cp-old-runtime", fleet, INTERVAL,
                                       env=OLD_RUNTIME)
                try:
                    soak(args.soak, fleet.name, [
                        ("default runtime", cp.url, token, op_id, pid),
                        ("uvloop, collector untouched", old.url, old_token,
                         start_operation(old.url, old_token, fleet.name),
                         old.proc.pid)])  # type: ignore[union-attr]
                finally:
                    old.stop()
        finally:
            cp.stop()
    finally:
        fleet.sandbox.stop()


Served = tuple[str, str, str, str, int]  # label, url, token, operation, pid


def soak(seconds: float, cluster: str, servers: list[Served]) -> None:
    """50 watchers on each server at once for `seconds` (bounded; the issue asks 10 minutes,
    the default is 2): RSS every minute and the growth of each, side by side. The second
    server runs the runtime of before ADR 0011 (uvloop, Python's young-collection threshold),
    so a memory cost of the larger threshold would show as a difference. (Capping glibc's
    malloc arenas was measured here on 2026-12-03 and changed nothing: docs/benchmarks.md.)"""
    samples: dict[str, list[float]] = {label: [] for label, *_ in servers}

    async def run() -> None:
        until = time.monotonic() + seconds
        tasks = [asyncio.create_task(watcher(url, token, cluster, op_id, until))
                 for _, url, token, op_id, _ in servers for _ in range(50)]
        while not all(t.done() for t in tasks):
            for label, *_, pid in servers:
                samples[label].append(rss_mb(pid))
            await asyncio.sleep(5)
        for t in tasks:
            t.result()

    before = cloud_reads.reads()
    asyncio.run(run())
    per = (cloud_reads.reads() - before) / (seconds / INTERVAL) / len(servers)
    print(f"soak, 50 watchers per server, {seconds:.0f} s, {per:.1f} cloud reads per interval "
          "per server:", flush=True)
    for label, rss in samples.items():
        half = max(1, len(rss) // 2)
        growth = (sum(rss[half:]) / max(1, len(rss) - half)) / (sum(rss[:half]) / half)
        minutes = " ".join(f"{mb:.0f}" for mb in rss[::12])
        third = rss[len(rss) * 2 // 3]
        print(f"  {label:<22} RSS per minute {minutes} MB; last {rss[-1]:.0f} MB; mean of "
              f"2nd half / 1st half {growth:.3f}; over the last third {rss[-1] - third:+.0f} "
              "MB", flush=True)


if __name__ == "__main__":
    main()
