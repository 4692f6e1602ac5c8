"""Counting what the sandbox answers (bench only): AWS calls by action (the HyperPod and EKS
rule layers' dispatch) and Kubernetes list/get requests, by wrapping the sandbox's own
dispatchers in this process. The sandbox's ledger counts only mutations."""

from __future__ import annotations

import collections
import functools
from typing import Any

from podplane_sandbox.aws.router import AwsRouter
from podplane_sandbox.kube.handlers import Handlers

COUNTS: collections.Counter[str] = collections.Counter()


def install() -> None:
    run = AwsRouter._run  # noqa: SLF001

    @functools.wraps(run)
    def counted_run(self: Any, emu: Any, action: str, params: dict[str, Any]) -> Any:
        COUNTS[f"aws:{action}"] += 1
        return run(self, emu, action, params)

    AwsRouter._run = counted_run  # type: ignore[method-assign]  # noqa: SLF001
    for name in ("list_objects", "get"):
        original = getattr(Handlers, name)

        def counted(self: Any, *args: Any, _name: str = name, _f: Any = original) -> Any:
            COUNTS[f"kube:{_name}"] += 1
            return _f(self, *args)

        setattr(Handlers, name, counted)


def reads() -> int:
    """Every read so far (AWS Describe*/List* and Kubernetes list/get)."""
    return sum(n for k, n in COUNTS.items()
               if k.startswith("kube:") or k.split(":")[1].startswith(("Describe", "List")))
