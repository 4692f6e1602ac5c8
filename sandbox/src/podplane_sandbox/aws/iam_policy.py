"""IAM policy evaluation, the part the sandbox needs: does a set of identity policies allow an
action on a resource?

Follows the IAM policy evaluation logic (AWS IAM User Guide, "Policy evaluation logic" and
"IAM JSON policy elements"): an explicit Deny wins, else some Allow must match; Action and
Resource match with `*` and `?` wildcards, actions case-insensitively. What this evaluator does
not model (NotAction, NotResource, NotPrincipal, condition operators other than the String and
Arn equals/like families, unknown condition keys) is decided the strict way: such an Allow does
not apply and such a Deny does.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

UNSUPPORTED = ("NotAction", "NotResource", "NotPrincipal")
CONDITION_OPERATORS = {"StringEquals": False, "StringLike": True, "ArnEquals": False,
                       "ArnLike": True}
_VARIABLE = re.compile(r"\$\{([^}]+)\}")


def allows(policies: Iterable[dict[str, Any]], action: str, resource: str,
           context: dict[str, str]) -> bool:
    statements = [s for doc in policies for s in _statements(doc)]
    if any(_matches(s, action, resource, context, strict_for="Deny") for s in statements
           if s.get("Effect") == "Deny"):
        return False
    return any(_matches(s, action, resource, context, strict_for="Allow") for s in statements
               if s.get("Effect") == "Allow")


def wildcard(pattern: str, value: str, ignore_case: bool = False) -> bool:
    flags = re.IGNORECASE if ignore_case else 0
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, value, flags) is not None


def as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, list) else [value]


def _statements(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in as_list(doc.get("Statement")) if isinstance(s, dict)]


def _matches(statement: dict[str, Any], action: str, resource: str, context: dict[str, str],
             strict_for: str) -> bool:
    """Whether a statement applies; what we cannot evaluate applies to a Deny only."""
    if any(key in statement for key in UNSUPPORTED):
        return strict_for == "Deny"
    if not any(wildcard(p, action, ignore_case=True) for p in as_list(statement.get("Action"))):
        return False
    if not any(wildcard(p, resource) for p in as_list(statement.get("Resource"))):
        return False
    verdict = _conditions(statement.get("Condition") or {}, context)
    return (strict_for == "Deny") if verdict is None else verdict


def _conditions(block: dict[str, Any], context: dict[str, str]) -> bool | None:
    """True/False when every condition could be evaluated; None when one could not."""
    for operator, tests in block.items():
        like = CONDITION_OPERATORS.get(operator)
        if like is None or not isinstance(tests, dict):
            return None
        for key, wanted in tests.items():
            if key not in context:
                return None
            values = [_substitute(str(v), context) for v in as_list(wanted)]
            if any(v is None for v in values):
                return None
            if not any(wildcard(v, context[key]) if like else v == context[key]
                       for v in values if v is not None):
                return False
    return True


def _substitute(value: str, context: dict[str, str]) -> str | None:
    missing = [name for name in _VARIABLE.findall(value) if name not in context]
    if missing:
        return None
    return _VARIABLE.sub(lambda m: context[m.group(1)], value)
