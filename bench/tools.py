"""What the benches share: wrk (installed if missing), latency percentiles, a process's RSS."""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

# wrk sends every request with one token: the per-token rate limit (50/s, burst 500;
# services/access/limits.py) would answer most of them 429. The benches measure the server's
# request path, so they lift the limit for the process they start.
NO_RATE_LIMIT = {"PODPLANE_RATE_PER_SECOND": "1000000", "PODPLANE_RATE_BURST": "1000000"}


def ensure_wrk() -> str:
    """wrk is native, so the load generator is not the bottleneck (Debian package `wrk`)."""
    found = shutil.which("wrk")
    if found is None:
        subprocess.run(["apt-get", "install", "-y", "wrk"], check=True, capture_output=True)
        found = shutil.which("wrk")
    assert found, "wrk is not installed and apt-get could not install it"
    return found


def wrk(url: str, token: str, connections: int, seconds: int = 10,
        server_pid: int | None = None) -> dict[str, Any]:
    """req/s, p50 and p99 (ms) and errors of one wrk run (2 threads: the machine's 2 cores);
    with `server_pid`, also the server's CPU ms per request (its user + system time over the
    run / requests): unlike req/s, barely moved by what else the machine is running."""
    cpu_before = cpu_seconds(server_pid) if server_pid else 0.0
    out = subprocess.run(
        [ensure_wrk(), "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", "--timeout",
         "10s", "-H", f"Authorization: Bearer {token}", url],
        check=True, capture_output=True, text=True).stdout
    pct = dict(re.findall(r"^\s+(50|99)%\s+([\d.]+\w+)", out, re.M))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    requests = int(re.search(r"(\d+) requests in", out).group(1))  # type: ignore[union-attr]
    cpu = cpu_seconds(server_pid) - cpu_before if server_pid else 0.0
    return {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),  # type: ignore[union-attr]
            "p50_ms": _ms(pct["50"]), "p99_ms": _ms(pct["99"]),
            "cpu_ms": 1000 * cpu / max(requests, 1),
            "errors": (int(non2xx.group(1)) if non2xx else 0)
            + (sum(int(g) for g in sock.groups()) if sock else 0)}


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds the process has used (/proc/<pid>/stat fields 14 and 15)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _ms(text: str) -> float:
    value, unit = re.fullmatch(r"([\d.]+)(\w+)", text).groups()  # type: ignore[union-attr]
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}[unit]


def timed(call: Callable[[], Any], runs: int) -> list[float]:
    """Wall times in ms of `runs` calls, one after the other."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        call()
        times.append((time.perf_counter() - t0) * 1000)
    return times


def p50(times: list[float]) -> float:
    return statistics.median(times)


def rss_mb(pid: int) -> float:
    """Resident memory of the process and its children (MB), from /proc."""
    total = 0
    for p in [pid, *_children(pid)]:
        status = Path(f"/proc/{p}/status")
        if status.exists():
            found = re.search(r"VmRSS:\s+(\d+) kB", status.read_text())
            total += int(found.group(1)) if found else 0
    return total / 1024


def _children(pid: int) -> list[int]:
    found = Path(f"/proc/{pid}/task/{pid}/children")
    kids = [int(k) for k in found.read_text().split()] if found.exists() else []
    return kids + [g for k in kids for g in _children(k)]


def get_ok(client: httpx.Client, path: str, **params: Any) -> httpx.Response:
    r = client.get(path, params=params)
    assert r.status_code == 200, (path, r.status_code, r.text[:300])
    return r
