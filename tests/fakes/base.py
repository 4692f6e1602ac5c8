"""What every fake port shares: a call log and queued AWS errors."""

from __future__ import annotations

from typing import Any

from podplane.domain.cloud_errors import classify


class FakePort:
    service = ""
    # Reads are not logged: tests assert on what a step changed.
    READS = ("describe_", "list_", "get_")

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self._faults: dict[str, list[str]] = {}

    def fail(self, operation: str, *codes: str) -> None:
        """The next calls of `operation` answer these AWS error codes, in order."""
        self._faults.setdefault(operation, []).extend(codes)

    def _enter(self, operation: str, **params: Any) -> None:
        if not operation.startswith(self.READS):
            self.calls.append((operation, params))
        queued = self._faults.get(operation)
        if queued:
            raise classify(queued.pop(0), "refused by the fake", f"{self.service}.{operation}")

    def changed(self) -> list[str]:
        return [name for name, _ in self.calls]

    def refuse(self, operation: str, code: str, what: str) -> Exception:
        """The CloudError the real adapter raises when AWS answers `code`."""
        return classify(code, f"refused: {what}", f"{self.service}.{operation}")
