"""Issue 31's contract for the instance-group kinds, on the groups tests' world (a cluster
made in the sandbox and imported: its new groups' nodes come up there), the cache at
production retention on a stopped clock. The issue's first case: after `instance_group.add`
succeeded, `PATCH .../instance-groups/spot1` answered 404."""

from __future__ import annotations

from tests.groups.conftest import CLUSTER, Cluster, cluster  # noqa: F401 (fixture)
from tests.mcp.conftest import mcp_client
from tests.truth.conftest import StoppedClock, production_cache
from tests.truth.contract import Case, Request, View, fields_are, run_case

BASE = f"/api/v1/clusters/{CLUSTER}/instance-groups"
SPOT = View(f"{BASE}/spot1", "instance_group_get", {"cluster": CLUSTER, "group": "spot1"},
            fields_are(target_count=1, current_count=1))
GROUP_CASES = [
    Case("instance_group.add", Request("POST", BASE, {
        "name": "spot1", "instance_type": "ml.g5.8xlarge", "count": 1,
        "availability_zone": "us-west-2a", "capacity_type": "spot"}), (SPOT,)),
    Case("instance_group.scale", Request("PATCH", f"{BASE}/spot1", {"count": 2}),
         (View(SPOT.path, SPOT.tool, SPOT.args, fields_are(target_count=2, current_count=2)),)),
    Case("instance_group.delete", Request("DELETE", f"{BASE}/spot1", params={"confirm": "true"}),
         (View(SPOT.path, SPOT.tool, SPOT.args, None),), repeat_conflict="not_found"),
]
KINDS = [c.kind for c in GROUP_CASES]


async def test_group_operations_are_what_every_read_shows(cluster: Cluster) -> None:  # noqa: F811
    stack = cluster.stack
    production_cache(stack, StoppedClock())
    problems: dict[str, list[str]] = {}
    async with stack.client("admin") as api, mcp_client(stack.app, stack.tokens["admin"]) as mcp:
        for case in GROUP_CASES:
            problems[case.kind] = await run_case(api, mcp, case)
    assert problems == {k: [] for k in KINDS}, problems
