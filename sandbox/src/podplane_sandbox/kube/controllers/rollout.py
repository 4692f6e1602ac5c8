"""How many pods each ReplicaSet of a Deployment should run while its template changes.

Kubernetes' deployment controller (kubernetes/kubernetes pkg/controller/deployment):
- `RollingUpdate` (rolling.go `rolloutRolling`): the new ReplicaSet grows while the total stays
  within `replicas + maxSurge` (`reconcileNewReplicaSet`, util `NewRSNewReplicas`); old
  ReplicaSets shrink only while `replicas - maxUnavailable` pods stay available
  (`reconcileOldReplicaSets`): first their unavailable pods (`cleanupUnhealthyReplicas`),
  then available ones, oldest set first (`scaleDownOldReplicaSetsForRollingUpdate`). One of
  the two per sync: a sync that scaled the new set up returns.
- `maxSurge` is rounded up and `maxUnavailable` down from percentages; both zero makes
  `maxUnavailable` 1 (util `ResolveFenceposts`). Defaults 25% / 25% (apps/v1 defaults).
- `Recreate` (recreate.go): old sets go to zero, the new set starts once no old pod is left.
So old pods keep serving until new ones are Ready, and an update whose pods never become
Ready (an image that cannot pull) leaves the old pods running.
"""

from __future__ import annotations

import math
from typing import Any

Obj = dict[str, Any]


def _scaled(value: Any, total: int, round_up: bool) -> int:
    if isinstance(value, str) and value.endswith("%"):
        exact = int(value[:-1]) * total / 100
        return math.ceil(exact) if round_up else math.floor(exact)
    return int(value)


def fenceposts(spec: Obj, want: int) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) as pod counts."""
    rolling = (spec.get("strategy") or {}).get("rollingUpdate") or {}
    surge = _scaled(rolling.get("maxSurge", "25%"), want, True)
    unavailable = _scaled(rolling.get("maxUnavailable", "25%"), want, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def replicas(rs: Obj) -> int:
    return int((rs.get("spec") or {}).get("replicas", 0))


def available(rs: Obj) -> int:
    return int((rs.get("status") or {}).get("availableReplicas") or 0)


def new_set_size(spec: Obj, want: int, current: int, all_sets_total: int) -> int:
    """What the new ReplicaSet should run now (`current` now; `all_sets_total` of every set,
    the new one included)."""
    if current >= want:
        return want
    surge, _ = fenceposts(spec, want)
    room = max(0, want + surge - all_sets_total)
    return current + min(room, want - current)


def old_set_sizes(spec: Obj, want: int, new_size: int, new_available: int,
                  olds: list[Obj]) -> list[int]:
    """What each old ReplicaSet (oldest first) should run now."""
    sizes = [replicas(rs) for rs in olds]
    _, unavailable = fenceposts(spec, want)
    min_available = want - unavailable
    budget = sum(sizes) + new_size - min_available - (new_size - new_available)
    if budget <= 0:
        return sizes
    for i, rs in enumerate(olds):  # unavailable pods of old sets go first
        cut = max(0, min(budget, sizes[i] - available(rs)))
        sizes[i] -= cut
        budget -= cut
    spare = sum(available(rs) for rs in olds) + new_available - min_available
    for i in range(len(olds)):
        cut = max(0, min(spare, sizes[i]))
        sizes[i] -= cut
        spare -= cut
    return sizes
