"""A diagnosis's answer: findings with their evidence, a conclusion, and the next step as a
tool call the diagnosis suggests and never makes (pure)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from podplane.domain.doctor import Evidence, Finding, Status, worst

HEALTHY = "healthy"
__all__ = ["HEALTHY", "Evidence", "Finding", "Status", "SuggestedCall", "Verdict"]


@dataclass(frozen=True)
class SuggestedCall:
    """An MCP tool call (REST and CLI name the same action) with the arguments to send and
    what it costs; `mutates`: the person or agent must confirm it before anyone makes it."""

    tool: str
    arguments: dict[str, Any]
    cost: str
    mutates: bool


@dataclass(frozen=True)
class Verdict:
    target: str
    conclusion: str  # HEALTHY, or the cause in one sentence
    findings: tuple[Finding, ...] = ()
    next: SuggestedCall | None = None
    # Node diagnoses: every rung of investigate -> reboot -> replace, `next` among them.
    ladder: tuple[SuggestedCall, ...] = ()
    since: str | None = None  # when the condition began, as the cloud stamped it
    notes: tuple[str, ...] = field(default=())

    @property
    def status(self) -> Status:
        return worst(list(self.findings))

    def shape(self) -> dict[str, Any]:
        """Plain JSON for the faces."""
        out = asdict(self)
        out["status"] = self.status.value
        for f in out["findings"]:
            f["status"] = f["status"].value
        return out


def healthy(target: str, *notes: str) -> Verdict:
    return Verdict(target, HEALTHY, notes=notes)


def evidence(source: str, detail: str) -> Evidence:
    return Evidence(source, detail)
