"""HA: two real servers on one database share the operations, and no step runs twice.

Each server's test-kit cloud writes its own ledger (PODPLANE_TEST_LEDGER), one line per Touch
call, so the ledgers say which server made each call: every operation's Touch must appear
exactly once across both, and each server must have made some. These start two
`python -m podplane serve` processes, so real (short) time passes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from podplane_testkit.touch import LEDGER_ENV, FakeCloud
from tests.ops.test_crash import settle, start_touch
from tests.served import ControlPlane

OPERATIONS = 24


@pytest.fixture
def pair(tmp_path: Path, db_url: str) -> Iterator[list[ControlPlane]]:
    servers = [ControlPlane(tmp_path / name, {
        "PODPLANE_DATABASE_URL": db_url, "PODPLANE_TEST_WORKFLOWS": "1",
        LEDGER_ENV: str(tmp_path / f"{name}-cloud.jsonl")}) for name in ("a", "b")]
    try:
        for server in servers:
            server.start()
        yield servers
    finally:
        for server in servers:
            server.stop()


def start(server: ControlPlane, token: str, i: int) -> dict[str, Any]:
    with server.api(token) as api:
        op = start_touch(api, f"ha-{i}", f"ha-{i}")
    assert op is not None
    return op


@pytest.mark.slow
@pytest.mark.postgres
def test_two_servers_share_the_operations_and_no_step_runs_twice(
        pair: list[ControlPlane]) -> None:
    a, b = pair
    token = a.token("ha-admin")  # one database: the token works on both
    with ThreadPoolExecutor(8) as pool:  # both servers take requests at once
        ops = list(pool.map(lambda i: start(pair[i % 2], token, i), range(OPERATIONS)))
    with b.api(token) as api:
        done = [settle(api, op["id"]) for op in ops]
    assert [op["status"] for op in done] == ["succeeded"] * OPERATIONS

    ledgers = [FakeCloud(Path(s.extra_env[LEDGER_ENV])).entries() for s in pair]
    calls = Counter(e["name"] for ledger in ledgers for e in ledger)
    assert calls == Counter({f"ha-{i}": 1 for i in range(OPERATIONS)})  # each exactly once
    assert all(ledger for ledger in ledgers), [len(ledger) for ledger in ledgers]
    tokens = {e["client_token"] for ledger in ledgers for e in ledger}
    assert tokens == {op["result"]["client_token"] for op in done}
    for op in done:  # every step ran once: one attempt, never resumed by the other server
        assert [s["attempt"] for s in op["steps"]] == [1, 1, 1], op
