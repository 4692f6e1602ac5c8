"""Which pods a ReplicaSet removes first when it has more than it wants.

kube-controller-manager's ReplicaSet controller (kubernetes/kubernetes
pkg/controller/replicaset/replica_set.go, `getPodsToDelete`) ranks every active pod by how many
active pods of the same controller share its node (`getPodsRankedByRelatedPodsOnSameNode`),
sorts them with `ActivePodsWithRanks` (pkg/controller/controller_utils.go, `Less`) and deletes
the first `diff`. The order, first removed first:

1. not scheduled (no `spec.nodeName`) before scheduled;
2. phase Pending, then Unknown, then Running;
3. not Ready before Ready;
4. lower `controller.kubernetes.io/pod-deletion-cost` before higher (feature gate
   PodDeletionCost, beta and on by default since 1.22; an absent or unparsable annotation
   counts as 0; Kubernetes docs "ReplicaSet", Pod deletion cost);
5. more co-located pods of the same controller on its node before fewer;
6. both Ready: Ready for less time before longer;
7. more container restarts before fewer;
8. created more recently before older.
With LogarithmicScaleDown (beta, on since 1.22) times in 6 and 8 compare on a log2 scale of
their age and ties go by uid, so pods of about the same age are removed in no fixed order:
a plan may not count on age among equals, only on the rules above.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from typing import Any

from podplane_sandbox.kube.util import parse_iso

Obj = dict[str, Any]
DELETION_COST = "controller.kubernetes.io/pod-deletion-cost"
PHASE_ORDER = {"Pending": 0, "Unknown": 1, "Running": 2}


def deletion_cost(pod: Obj) -> int:
    raw = (pod["metadata"].get("annotations") or {}).get(DELETION_COST)
    try:
        return int(str(raw)) if raw is not None else 0
    except ValueError:
        return 0  # the API server's validation refuses it; the controller reads 0


def _ready_since(pod: Obj) -> float | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready" and c.get("status") == "True":
            return parse_iso(c.get("lastTransitionTime")) or 0.0
    return None


def _restarts(pod: Obj) -> int:
    return max([int(c.get("restartCount") or 0)
                for c in (pod.get("status") or {}).get("containerStatuses") or []] or [0])


def _log_age(at: float | None, now: float) -> int:
    age = now - (at or now)
    return int(math.log2(age * 1e9)) if age > 0 else -1  # Go compares nanoseconds


def _by_time(a: Obj, b: Obj, ta: float | None, tb: float | None, now: float) -> int:
    """Newer first, on a log scale of age; ties by uid."""
    if not ta or not tb:  # an empty time comes first (afterOrZero)
        return -1 if not ta else 1
    diff = _log_age(ta, now) - _log_age(tb, now)
    if diff == 0:
        return -1 if a["metadata"]["uid"] < b["metadata"]["uid"] else 1
    return -1 if diff < 0 else 1


def order_for_deletion(pods: list[Obj], now: float) -> list[Obj]:
    """`pods` sorted as the ReplicaSet controller sorts them: the first ones go first."""
    on_node = Counter(p["spec"].get("nodeName") or "" for p in pods)

    def ready(p: Obj) -> bool:
        return _ready_since(p) is not None

    def compare(a: Obj, b: Obj) -> int:
        na, nb = a["spec"].get("nodeName") or "", b["spec"].get("nodeName") or ""
        if na != nb and not (na and nb):
            return -1 if not na else 1
        pa = PHASE_ORDER.get((a.get("status") or {}).get("phase") or "", -1)
        pb = PHASE_ORDER.get((b.get("status") or {}).get("phase") or "", -1)
        if pa != pb:
            return -1 if pa < pb else 1
        if ready(a) != ready(b):
            return -1 if not ready(a) else 1
        if deletion_cost(a) != deletion_cost(b):
            return -1 if deletion_cost(a) < deletion_cost(b) else 1
        if on_node[na] != on_node[nb]:
            return -1 if on_node[na] > on_node[nb] else 1
        if ready(a) and ready(b) and _ready_since(a) != _ready_since(b):
            return _by_time(a, b, _ready_since(a), _ready_since(b), now)
        if _restarts(a) != _restarts(b):
            return -1 if _restarts(a) > _restarts(b) else 1
        ca = parse_iso(a["metadata"].get("creationTimestamp"))
        cb = parse_iso(b["metadata"].get("creationTimestamp"))
        return _by_time(a, b, ca, cb, now) if ca != cb else 0

    return sorted(pods, key=functools.cmp_to_key(compare))
