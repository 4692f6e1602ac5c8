"""The cost report the measure plugin builds (tests/plugins/measure.py): per module and per
worker, summed across xdist workers, as a table and as JSON."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# What the budget guard can hold a run to (tests/budget.toml), in the order the table shows.
COUNTS = ("podplane_creates", "sandbox_creates", "hyperpod_creates", "sandbox_starts",
          "kube_starts", "processes")
TALLY_EVENTS = {"sandbox_start": "sandbox_starts", "kube_start": "kube_starts",
                "hyperpod_create": "hyperpod_creates"}
SESSION = "<session>"  # set-up before the first test (collection, session fixtures)


def module_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def tally_counts(path: Path) -> dict[str, Counter[str]]:
    """The sandbox's tally lines (podplane_sandbox.tally), counted per module."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    if not path.exists():
        return counts
    for line in path.read_text().splitlines():
        event = json.loads(line)
        what = event["event"]
        if what == "eks_create":
            what = "podplane_creates" if event.get("managed") else "sandbox_creates"
        else:
            what = TALLY_EVENTS.get(what, what)
        counts[event.get("module") or SESSION][what] += 1
    return counts


def _row() -> dict[str, Any]:
    return {"workers": [], "tests": 0, "cpu": 0.0, "wall": 0.0, **dict.fromkeys(COUNTS, 0)}


@dataclass
class Report:
    modules: dict[str, dict[str, Any]] = field(default_factory=lambda: defaultdict(_row))
    workers: dict[str, dict[str, float]] = field(default_factory=dict)
    process_kinds: Counter[str] = field(default_factory=Counter)
    untiered: list[str] = field(default_factory=list)  # started something, not marked e2e

    def add(self, module: str, worker: str, **amounts: float) -> None:
        row = self.modules[module]
        if worker not in row["workers"]:
            row["workers"].append(worker)
        for key, amount in amounts.items():
            row[key] = row.get(key, 0) + amount

    def merge(self, other: Report) -> None:
        for module, row in other.modules.items():
            mine = self.modules[module]
            mine["workers"] += [w for w in row["workers"] if w not in mine["workers"]]
            for key, amount in row.items():
                if key != "workers":
                    mine[key] = mine.get(key, 0) + amount
        self.workers.update(other.workers)
        self.process_kinds.update(other.process_kinds)
        self.untiered += other.untiered

    def totals(self) -> dict[str, Any]:
        sums: dict[str, Any] = {k: sum(r[k] for r in self.modules.values())
                                for k in ("tests", *COUNTS)}
        sums["cpu"] = round(sum(w["cpu"] for w in self.workers.values()), 1)
        sums["modules"] = len([m for m in self.modules if m != SESSION])
        return sums

    def table(self, top: int) -> list[str]:
        head = f"{'CPU s':>7} {'wall s':>7} {'tests':>5} {'pp-cr':>5} {'sb-cr':>5} " \
               f"{'hp-cr':>5} {'sbox':>4} {'kube':>4} {'proc':>4}  module (worker)"
        rows = sorted(self.modules.items(), key=lambda kv: -kv[1]["cpu"])[:top]
        lines = [head]
        for module, r in rows:
            lines.append(f"{r['cpu']:7.1f} {r['wall']:7.1f} {r['tests']:5d} "
                         f"{r['podplane_creates']:5d} {r['sandbox_creates']:5d} "
                         f"{r['hyperpod_creates']:5d} {r['sandbox_starts']:4d} "
                         f"{r['kube_starts']:4d} {r['processes']:4d}  "
                         f"{module} ({','.join(r['workers'])})")
        lines.append("pp-cr: clusters created through podplane; sb-cr: EKS clusters made in the "
                     "sandbox directly; hp-cr: HyperPod creates; sbox/kube: sandbox and "
                     "Kubernetes API starts; proc: processes spawned")
        for worker, w in sorted(self.workers.items()):
            lines.append(f"worker {worker}: {w['cpu']:.1f} CPU s in {w['wall']:.1f} s")
        return lines

    def as_json(self) -> dict[str, Any]:
        return {"totals": self.totals(), "workers": self.workers,
                "process_kinds": dict(self.process_kinds.most_common()),
                "untiered": sorted(self.untiered),
                "modules": {m: {**r, "cpu": round(r["cpu"], 2), "wall": round(r["wall"], 2)}
                            for m, r in sorted(self.modules.items(),
                                               key=lambda kv: -kv[1]["cpu"])}}

    def to_json(self) -> str:
        return json.dumps({"modules": self.modules, "workers": self.workers,
                           "process_kinds": self.process_kinds, "untiered": self.untiered})

    @classmethod
    def from_json(cls, raw: str) -> Report:
        data = json.loads(raw)
        report = cls(workers=dict(data["workers"]),
                     process_kinds=Counter(data["process_kinds"]),
                     untiered=list(data["untiered"]))
        for module, row in data["modules"].items():
            report.modules[module] = {**_row(), **row}
        return report
