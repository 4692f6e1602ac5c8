"""The sandbox's one IAM policy evaluator: the EKS/HyperPod rules (iam_rules.py) and IAM
SimulatePrincipalPolicy (iam_simulate.py) both decide with it.

Follows the IAM policy evaluation logic for identity policies in one account (AWS IAM User
Guide, "Policy evaluation logic" and "IAM JSON policy elements"): an explicit Deny wins, else
some Allow must match, else the request is implicitly denied. Action/NotAction and
Resource/NotResource match with the `*` and `?` wildcards (actions case-insensitively; a
requested resource `*` matches only a statement resource `*`). Conditions: the String and Arn
operators (plain, `Not`, `IgnoreCase`), `Bool`, each with `...IfExists`, and `Null` (whether
the key is present); condition keys are
case-insensitive; resources and condition values may use policy variables
(`${aws:username}`).

Two kinds of context. A *complete* one (a simulation: what the caller passed is all there is):
a missing key fails its condition and is reported as missing, except for `...IfExists` and
negated operators, which then match (as AWS does). A *partial* one (what the sandbox knows of a
real request): a missing key cannot be decided. Whatever cannot be decided (that, other
operators such as Numeric/Date/IpAddress or `ForAnyValue:`, `NotPrincipal`) is taken the strict
way: such an Allow does not apply and such a Deny does. Permissions boundaries, SCPs and
resource policies are not modelled.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

Doc = dict[str, Any]
_VARIABLE = re.compile(r"\$\{([^}]+)\}")
_TESTS: dict[str, Callable[[str, str], bool]] = {
    "StringEquals": lambda v, p: v == p,
    "StringLike": lambda v, p: wildcard(p, v),
    "StringEqualsIgnoreCase": lambda v, p: v.lower() == p.lower(),
    "ArnEquals": lambda v, p: v == p,
    "ArnLike": lambda v, p: wildcard(p, v),
    "Bool": lambda v, p: v.lower() == p.lower()}
_NEGATED = {"StringNotEquals": "StringEquals", "StringNotLike": "StringLike",
            "StringNotEqualsIgnoreCase": "StringEqualsIgnoreCase",
            "ArnNotEquals": "ArnEquals", "ArnNotLike": "ArnLike"}


@dataclass(frozen=True)
class Verdict:
    decision: str                    # allowed | explicitDeny | implicitDeny
    missing: tuple[str, ...] = ()    # context keys a condition needed and did not get


class _Context:
    def __init__(self, values: Mapping[str, Sequence[str]], complete: bool) -> None:
        self.values = {k.lower(): [str(v) for v in vs] for k, vs in values.items()}
        self.complete = complete
        self.missing: set[str] = set()


def allows(policies: Iterable[Doc], action: str, resource: str,
           context: Mapping[str, str]) -> bool:
    """Whether identity policies allow a real request of which the sandbox knows `context`."""
    known = {k: [v] for k, v in context.items()}
    return evaluate(policies, action, resource, known, complete=False).decision == "allowed"


def evaluate(policies: Iterable[Doc], action: str, resource: str,
             context: Mapping[str, Sequence[str]], complete: bool = True) -> Verdict:
    ctx = _Context(context, complete)
    applies = {"Allow": False, "Deny": False}
    for stmt in (s for doc in policies for s in as_list(doc.get("Statement"))):
        effect = stmt.get("Effect") if isinstance(stmt, dict) else None
        if effect not in applies:
            continue
        verdict = _applies(stmt, action, resource, ctx)
        if verdict is None:  # cannot be decided here: the strict way
            verdict = effect == "Deny"
        applies[effect] = applies[effect] or verdict
    decision = ("explicitDeny" if applies["Deny"] else
                "allowed" if applies["Allow"] else "implicitDeny")
    missing = tuple(sorted(ctx.missing)) if decision != "allowed" else ()
    return Verdict(decision, missing)


def wildcard(pattern: str, value: str, ignore_case: bool = False) -> bool:
    flags = re.IGNORECASE if ignore_case else 0
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, value, flags) is not None


def as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def parse_document(doc: Any) -> Doc:
    """A policy document as IAM stores it (a dict, JSON text, or URL-encoded JSON)."""
    if isinstance(doc, dict):
        return doc
    for text in (str(doc), unquote(str(doc))):
        try:
            value = json.loads(text)
        except (json.JSONDecodeError, TypeError):
            continue
        return value if isinstance(value, dict) else {}
    return {}


def entity_documents(holders: Iterable[Any]) -> list[Doc]:
    """The identity policies of IAM users, groups or roles as moto keeps them: inline
    policies and the default version of each attached managed policy."""
    docs: list[Doc] = []
    for holder in holders:
        docs += [parse_document(d) for d in holder.policies.values()]
        docs += [parse_document(v.document) for p in holder.managed_policies.values()
                 for v in p.versions if v.is_default]
    return docs


def _applies(stmt: Doc, action: str, resource: str, ctx: _Context) -> bool | None:
    if "NotPrincipal" in stmt:
        return None
    if not _element(stmt, "Action", action, None):
        return False
    on_resource = _element(stmt, "Resource", resource, ctx)
    if on_resource is not True:
        return on_resource
    return _conditions(stmt.get("Condition") or {}, ctx)


def _element(stmt: Doc, name: str, value: str, ctx: _Context | None) -> bool | None:
    """`Action`/`Resource` must match; `NotAction`/`NotResource` must not. Actions match
    case-insensitively; resources may hold policy variables (None: one has no value in a
    partial context; in a complete one such a pattern matches nothing)."""
    negated = name not in stmt
    raw = [str(p) for p in as_list(stmt.get("Not" + name) if negated else stmt[name])]
    patterns = raw if ctx is None else [_substitute(p, ctx) for p in raw]
    if ctx is not None and not ctx.complete and any(p is None for p in patterns):
        return None
    hit = any(p is not None and wildcard(p, value, ctx is None) for p in patterns)
    return not hit if negated else hit


def _conditions(block: Doc, ctx: _Context) -> bool | None:
    """True when every condition matches, False when one does not, None when one cannot be
    decided here (a False anywhere still decides)."""
    undecided = False
    for operator, tests in block.items():
        if not isinstance(tests, dict):
            return None
        for key, wanted in tests.items():
            verdict = _condition(operator, key, as_list(wanted), ctx)
            if verdict is False:
                return False
            undecided = undecided or verdict is None
    return None if undecided else True


def _condition(operator: str, key: str, wanted: list[Any], ctx: _Context) -> bool | None:
    if operator == "Null":   # "true": the key is absent; "false": it is present
        present = key.lower() in ctx.values
        if not present and not ctx.complete:
            return None
        return any(str(w).lower() == ("false" if present else "true") for w in wanted)
    if_exists = operator.endswith("IfExists")
    base = operator.removesuffix("IfExists")
    negated = base in _NEGATED
    test = _TESTS.get(_NEGATED.get(base, base))
    if test is None:
        return None
    values = ctx.values.get(key.lower())
    if values is None:
        if not ctx.complete:
            return None
        if not (if_exists or negated):
            ctx.missing.add(key)
        return if_exists or negated
    patterns = [_substitute(str(p), ctx) for p in wanted]
    if any(p is None for p in patterns):
        return False if ctx.complete else None
    hit = any(test(v, p) for v in values for p in patterns if p is not None)
    return not hit if negated else hit


def _substitute(value: str, ctx: _Context) -> str | None:
    """Policy variables replaced by their context values; None when one has no value."""
    names = _VARIABLE.findall(value)
    if any(n.lower() not in ctx.values for n in names):
        return None
    return _VARIABLE.sub(lambda m: ctx.values[m.group(1).lower()][0], value)
