"""The one desired-vs-observed mechanism: diff units, name their dependants, plan the repair.

A *unit* is anything podplane manages on a cluster: an EKS add-on, a rendered manifest, an IAM
role's attached policy, a Pod Identity association, a PersistentVolume, a feature's NodePool.
The core knows nothing about kinds; it compares flat field maps.

How a feature (or any other capability) plugs in:

1. domain: build its desired units (`Desired`: a key, a kind, the fields that matter, the keys
   it needs first in `after`). A field whose desired value is None is not compared.
2. services: an *observe* adapter reads AWS / Kubernetes and answers `Observed` per key, with
   `owned=True` only when the object carries podplane's own label or tag.
3. `plan(desired, observed)` answers the ordered `Step`s; `plan.changed` is False when nothing
   differs, and the caller then makes no operation and no mutation.
4. services: an *apply* adapter maps each `Step` (create / update / delete of one kind) to calls.

Ownership: a plan deletes only owned units (never what podplane did not create) and updates an
unowned one only when its `Desired.adopt` says podplane manages it anyway (the add-ons every
cluster needs); everything else it would have touched is listed in `Plan.left_alone`.
Order: creates and updates run dependencies first; deletes run dependants first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

FieldValue = str | int | bool | None
Verb = Literal["create", "update", "delete"]
# why a unit differs: absent, a field differs, present but failing, present but not wanted
DriftState = Literal["missing", "changed", "unhealthy", "unwanted"]


@dataclass(frozen=True)
class Desired:
    """What podplane wants of one unit."""

    key: str                                  # unique across all kinds, e.g. "eks-addon/coredns"
    kind: str
    fields: Mapping[str, FieldValue] = field(default_factory=dict)
    after: tuple[str, ...] = ()               # keys that must exist (and be healthy) first
    adopt: bool = False                       # may update it even when podplane did not make it


@dataclass(frozen=True)
class Observed:
    """What one unit looks like now; absent units simply have no `Observed`."""

    key: str
    kind: str
    fields: Mapping[str, FieldValue] = field(default_factory=dict)
    owned: bool = False                       # carries podplane's own label / tag
    healthy: bool = True
    after: tuple[str, ...] = ()               # what it needs; orders deletes (dependants first)


@dataclass(frozen=True)
class FieldDiff:
    field: str
    desired: FieldValue
    observed: FieldValue


@dataclass(frozen=True)
class UnitDiff:
    """One unit whose observed state departs from desired, and what depends on it."""

    key: str
    kind: str
    state: DriftState
    fields: tuple[FieldDiff, ...] = ()
    dependants: tuple[str, ...] = ()          # transitive, in dependency order
    owned: bool = True

    def summary(self) -> str:
        if self.state == "changed":
            return f"{self.key}: " + ", ".join(
                f"{d.field} is {d.observed!r}, want {d.desired!r}" for d in self.fields)
        return f"{self.key} is {self.state}"


@dataclass(frozen=True)
class Step:
    key: str
    kind: str
    verb: Verb
    reason: str
    cause: DriftState
    fields: tuple[FieldDiff, ...] = ()


@dataclass(frozen=True)
class LeftAlone:
    key: str
    kind: str
    reason: str


@dataclass(frozen=True)
class Plan:
    steps: tuple[Step, ...]
    left_alone: tuple[LeftAlone, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.steps)


def ordered(units: Iterable[Desired]) -> list[Desired]:
    """Units in dependency order; stable (declaration order among peers); cycles are errors.
    `after` keys that are not among `units` are ignored (they are someone else's)."""
    by_key = {u.key: u for u in units}
    return [by_key[k] for k in _order_keys(by_key)]


def _order_keys(by_key: Mapping[str, Desired]) -> list[str]:
    done: list[str] = []
    seen: set[str] = set()

    def visit(key: str, path: tuple[str, ...]) -> None:
        if key in seen:
            return
        if key in path:
            raise ValueError(f"dependency cycle: {' -> '.join(path + (key,))}")
        for need in by_key[key].after:
            if need in by_key:
                visit(need, path + (key,))
        seen.add(key)
        done.append(key)

    for key in by_key:
        visit(key, ())
    return done


def dependants(units: Iterable[Desired]) -> dict[str, tuple[str, ...]]:
    """Per unit, every unit that needs it directly or through others, in dependency order."""
    order = ordered(units)
    direct: dict[str, set[str]] = {u.key: set() for u in order}
    for unit in order:
        for need in unit.after:
            direct.get(need, set()).add(unit.key)
    out: dict[str, tuple[str, ...]] = {}
    for unit in reversed(order):               # dependants are computed before what they need
        reach = set(direct[unit.key])
        for child in direct[unit.key]:
            reach.update(out[child])
        out[unit.key] = tuple(u.key for u in order if u.key in reach)
    return out


def field_diffs(want: Desired, have: Observed) -> tuple[FieldDiff, ...]:
    return tuple(FieldDiff(name, value, have.fields.get(name))
                 for name, value in want.fields.items()
                 if value is not None and have.fields.get(name) != value)


def diff(desired: Iterable[Desired], observed: Mapping[str, Observed],
         prune: bool = False) -> list[UnitDiff]:
    """Every unit that departs from desired, desired ones in dependency order; with `prune`,
    observed units that are not desired follow as `unwanted` (owned or not: `owned` says)."""
    order = ordered(desired)
    deps = dependants(order)
    out: list[UnitDiff] = []
    for want in order:
        have = observed.get(want.key)
        if have is None:
            out.append(UnitDiff(want.key, want.kind, "missing", (), deps[want.key], True))
        elif changes := field_diffs(want, have):
            out.append(UnitDiff(want.key, want.kind, "changed", changes, deps[want.key],
                                have.owned))
        elif not have.healthy:
            out.append(UnitDiff(want.key, want.kind, "unhealthy", (), deps[want.key],
                                have.owned))
    if prune:
        wanted = set(deps)
        out.extend(UnitDiff(have.key, have.kind, "unwanted", (), (), have.owned)
                   for have in observed.values() if have.key not in wanted)
    return out


def plan(desired: Iterable[Desired], observed: Mapping[str, Observed],
         prune: bool = False) -> Plan:
    """The steps that bring observed to desired; `Plan.changed` is False when none differ.
    With `prune`, owned units that are no longer desired are deleted (dependants first);
    unowned ones are never deleted and are listed as left alone."""
    units = list(desired)
    adopt = {u.key: u.adopt for u in units}
    creates: list[Step] = []
    deletes: list[Step] = []
    alone: list[LeftAlone] = []
    for d in diff(units, observed, prune):
        if d.state == "unwanted":
            if d.owned:
                deletes.append(Step(d.key, d.kind, "delete", f"{d.key} is no longer wanted",
                                    d.state))
            else:
                alone.append(LeftAlone(d.key, d.kind, "not created by podplane; not deleted"))
        elif d.state != "missing" and not d.owned and not adopt[d.key]:
            alone.append(LeftAlone(d.key, d.kind,
                                   f"not created by podplane; not changed ({d.summary()})"))
        else:
            creates.append(_step(d))
    return Plan(tuple(_dependants_first(deletes, observed) + creates), tuple(alone))


def _step(d: UnitDiff) -> Step:
    if d.state == "missing":
        return Step(d.key, d.kind, "create", f"{d.key} is missing", d.state)
    if d.state == "unhealthy":
        return Step(d.key, d.kind, "update", f"{d.key} is not healthy", d.state)
    return Step(d.key, d.kind, "update", d.summary(), d.state, d.fields)


def _dependants_first(deletes: list[Step], observed: Mapping[str, Observed]) -> list[Step]:
    """Deletes in reverse dependency order, read from what each observed unit needs."""
    by_key = {s.key: s for s in deletes}
    as_units = [Desired(s.key, s.kind, after=observed[s.key].after) for s in deletes]
    return [by_key[u.key] for u in reversed(ordered(as_units))]
