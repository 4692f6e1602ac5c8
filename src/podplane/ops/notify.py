"""In-process change notifier: wakes waiters (long-poll, WebSocket) when an operation changes.

Waiters still re-read the database after waking or after a short slice, so a change made
by another process (PostgreSQL HA) is seen too, just a little later.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict


class Notifier:
    def __init__(self) -> None:
        self._events: dict[str, set[asyncio.Event]] = defaultdict(set)

    def notify(self, op_id: str) -> None:
        for event in list(self._events.get(op_id, ())):
            event.set()

    def subscribe(self, op_id: str) -> asyncio.Event:
        event = asyncio.Event()
        self._events[op_id].add(event)
        return event

    def unsubscribe(self, op_id: str, event: asyncio.Event) -> None:
        waiters = self._events.get(op_id)
        if waiters is not None:
            waiters.discard(event)
            if not waiters:
                del self._events[op_id]
