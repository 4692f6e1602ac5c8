"""A restarted store hands out UIDs and generated names its objects do not already hold
(Kubernetes docs "Object Names and IDs": every object over a cluster's lifetime has its own
UID). The owner index rests on it: a job that drew a DaemonSet's UID after a restart "owned"
that DaemonSet's pods, and the job's restart deleted them (tests/jobs/test_faults)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from podplane_sandbox.clock import VirtualClock
from podplane_sandbox.kube.resources import Registry
from podplane_sandbox.kube.store import Store


def config_map(**meta: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {}}


def test_a_restarted_store_reuses_no_uid_and_no_generated_name(tmp_path: Path) -> None:
    registry, clock = Registry(), VirtualClock(speed=0)
    maps, spaces = registry.by_key("configmaps"), registry.by_key("namespaces")
    assert maps is not None and spaces is not None
    first = Store(registry, clock, seed=3)
    first.create(spaces, {"apiVersion": "v1", "kind": "Namespace",
                          "metadata": {"name": "default"}}, "")
    made = [first.create(maps, config_map(generateName="cm-"), "default") for _ in range(20)]
    first.save(tmp_path / "store.json")

    again = Store(registry, clock, seed=3)
    again.load(tmp_path / "store.json", on_crd=lambda crd: None)
    later = [again.create(maps, config_map(generateName="cm-"), "default") for _ in range(20)]

    assert {m["metadata"]["uid"] for m in made}.isdisjoint(m["metadata"]["uid"] for m in later)
    assert len({m["metadata"]["name"] for m in made + later}) == 40
    assert not again.dependents(made[0]["metadata"]["uid"])
