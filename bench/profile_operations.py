"""Where the time of an authenticated `GET /api/v1/operations?limit=20` goes: `podplane serve`
under wrk load (200 connections), sampled by py-spy (all threads, so aiosqlite's worker thread
counts too), each sample attributed to the areas of the request path it passes through.

    nice .venv/bin/python bench/profile_operations.py [--seconds 15] [--operations 40]

Runs twice in one go: operation list pages not kept (PODPLANE_OPS_PAGE_SECONDS=0, as before
issue 21) and kept (the default). Per run: req/s of /health, /session (authentication only)
and the operations list, the per-request cost each layer adds, and per area the share of CPU
samples whose stack is inside it (inclusive: areas overlap), then the top functions. py-spy
and wrk are installed by the bench if missing (pip / apt-get)."""

from __future__ import annotations

import argparse
import collections
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import httpx

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]

from tests.served import ControlPlane  # noqa: E402
from tools import NO_RATE_LIMIT, wrk  # noqa: E402

AREAS = {  # area -> substrings of a frame "function (file:line)"
    "auth (api/auth.py, services/access)": ("podplane/api/auth.py", "podplane/services/access"),
    "database (SQLAlchemy, aiosqlite, sqlite3)": ("sqlalchemy/", "aiosqlite/", "sqlite3/"),
    "operation views (ops/views, store/operations)": ("podplane/ops/views.py",
                                                      "podplane/store/operations.py"),
    "serialization (pydantic, response encoding)": ("pydantic", "serialize_response",
                                                    "jsonable_encoder", "json/encoder"),
    "HTTP + middleware (uvicorn, h11/httptools, starlette)": ("uvicorn/", "h11/", "httptools",
                                                              "starlette/", "gzip"),
    "asyncio loop (scheduling, selectors)": ("asyncio/", "selectors.py"),
}


def py_spy() -> str:
    found = Path(sys.executable).parent / "py-spy"
    if not found.exists():
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "py-spy"], check=True)
    return str(found)


def seed(cp: ControlPlane, token: str, count: int) -> None:
    with cp.api(token) as api:
        for i in range(count):
            r = api.post("/api/v1/operations/_test", json={
                "target": f"bench/op-{i}", "params": {"name": f"op-{i}", "delay": 0}})
            assert r.status_code == 202, r.text


def profile(pid: int, seconds: int, out: Path) -> None:
    subprocess.run([py_spy(), "record", "-p", str(pid), "-d", str(seconds), "-r", "100",
                    "-f", "raw", "-o", str(out), "--nonblocking"], check=True,
                   capture_output=True)


def report(raw: Path, top: int) -> None:
    total = 0
    areas: collections.Counter[str] = collections.Counter()
    funcs: collections.Counter[str] = collections.Counter()
    for line in raw.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        count = int(n)
        total += count
        frames = stack.split(";")
        for area, marks in AREAS.items():
            if any(m in f for f in frames for m in marks):
                areas[area] += count
        for f in set(frames):
            if "podplane/" in f:
                funcs[f.split(" (")[0] + " " + f.split("podplane/")[-1].split(":")[0]] += count
    print(f"CPU samples: {total} (py-spy, 100 Hz, all threads)")
    for area, n in areas.most_common():
        print(f"  {100 * n / total:5.1f}%  {area}")
    print(f"top {top} podplane functions (inclusive share of samples):")
    for f, n in funcs.most_common(top):
        print(f"  {100 * n / total:5.1f}%  {f}")


def run(home: Path, label: str, env: dict[str, str], args: argparse.Namespace) -> float:
    cp = ControlPlane(home, extra_env={"PODPLANE_TEST_WORKFLOWS": "1",
                                       "PODPLANE_AWS_ENDPOINT_URL": "http://127.0.0.1:9",
                                       **NO_RATE_LIMIT, **env})
    cp.start()
    try:
        token = cp.token("bench")
        seed(cp, token, args.operations)
        url = f"{cp.url}/api/v1"
        httpx.get(f"{url}/operations", params={"limit": 20},
                  headers={"Authorization": f"Bearer {token}"}).raise_for_status()
        pid = cp.proc.pid  # type: ignore[union-attr]
        plain = {path: wrk(f"{url}{path}", token, 200, args.seconds, server_pid=pid)
                 for path in ("/health", "/session", "/operations?limit=20")}
        raw = home / "profile.txt"
        spy = threading.Thread(target=profile, args=(cp.proc.pid, args.seconds, raw))  # type: ignore[union-attr]
        spy.start()
        wrk(f"{url}/operations?limit=20", token, 200, args.seconds)
        spy.join()
    finally:
        cp.stop()
    print(f"\n== {label} ==")
    for path, got in plain.items():
        print(f"GET {path:<22} wrk 200 clients: {got['rps']:6.0f} req/s, p50 "
              f"{got['p50_ms']:6.1f} ms, p99 {got['p99_ms']:6.1f} ms, errors {got['errors']}, "
              f"server CPU {got['cpu_ms']:.3f} ms/request")
    ms = {p: 1000 / g["rps"] for p, g in plain.items()}  # server time per request (2 cores)
    auth = ms["/session"] - ms["/health"]
    rest = ms["/operations?limit=20"] - ms["/session"]
    print(f"per request: HTTP floor {ms['/health']:.2f} ms, + authentication {auth:.2f} ms, "
          f"+ the operations list {rest:.2f} ms (from the req/s above)")
    print("py-spy profile of the operations list under the same load:")
    report(raw, args.top)
    return plain["/operations?limit=20"]["rps"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=15)
    parser.add_argument("--operations", type=int, default=40)
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="bench-profile-"))
    before = run(home / "off", "pages not kept (PODPLANE_OPS_PAGE_SECONDS=0)",
                 {"PODPLANE_OPS_PAGE_SECONDS": "0"}, args)
    after = run(home / "on", "pages kept until the next change (default)", {}, args)
    print(f"\noperations list req/s, kept / not kept: {after / before:.2f}x")


if __name__ == "__main__":
    main()
