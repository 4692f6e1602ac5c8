"""Who uses the CPU in a test run: the sandbox's Kubernetes emulator, its AWS emulators, moto,
the control plane, or the rest.

    pip install py-spy   # a measuring tool, not a dependency of either package
    py-spy record --gil -r 100 -f raw -o /tmp/run.txt -- \\
        .venv/bin/python -m pytest -q tests/clusters/test_create.py
    python sandbox/tools/cpu_share.py /tmp/run.txt

`--gil` samples only the thread holding the GIL, so a sample is Python CPU time, not a thread
waiting in select(). Each sample goes to module imports when the stack is importing, else to
the component of its innermost frame that belongs to one (py-spy names files by module path),
so a json.dumps called by a controller counts for the emulator.
"""

from __future__ import annotations

import re
import sys
from collections import Counter

FRAME = re.compile(r"\((?P<path>[^()]*?):\d+\)$")
COMPONENTS = [("podplane_sandbox/kube/", "sandbox: Kubernetes emulator"),
              ("podplane_sandbox/", "sandbox: AWS emulators (ours)"),
              ("moto/", "sandbox: moto"),
              ("podplane/", "control plane (podplane)"),
              ("tests/", "test code")]
OTHER = "other (pytest, event loops, HTTP servers and clients, no frame of ours)"


def component(stack: str) -> str:
    if "importlib._bootstrap" in stack:
        return "module imports"
    for frame in reversed(stack.split(";")):
        found = FRAME.search(frame)
        path = found.group("path") if found else ""
        for prefix, name in COMPONENTS:
            if path.startswith(prefix):
                return name
    return OTHER


def shares(lines: list[str]) -> Counter[str]:
    counts: Counter[str] = Counter()
    for line in lines:
        stack, _, n = line.rstrip("\n").rpartition(" ")
        if stack:
            counts[component(stack)] += int(n)
    return counts


def main(path: str) -> None:
    with open(path) as f:
        counts = shares(f.readlines())
    total = sum(counts.values())
    running = total - counts["module imports"]
    print(f"{'all':>6} {'no imports':>10}  samples  component")
    for name, n in counts.most_common():
        rest = "" if name == "module imports" else f"{n / running * 100:9.1f}%"
        print(f"{n / total * 100:5.1f}% {rest:>10}  {n:7d}  {name}")
    print(f"total {total} samples")


if __name__ == "__main__":
    main(sys.argv[1])
