"""Label and field selectors as the API server parses them."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from podplane_sandbox.kube.errors import KubeError

Pred = Callable[[dict[str, str]], bool]
_SET_RE = re.compile(r"^\s*(!?)([A-Za-z0-9_./-]+)\s*(?:(notin|in)\s*\(([^)]*)\))?\s*$")
_EQ_RE = re.compile(r"^\s*([A-Za-z0-9_./-]+)\s*(==|=|!=)\s*([A-Za-z0-9_.-]*)\s*$")


def _split_terms(text: str) -> list[str]:
    terms, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            terms.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        terms.append(cur)
    return terms


def _term(text: str) -> Pred:
    m = _EQ_RE.match(text)
    if m:
        key, op, value = m.groups()
        if op == "!=":
            return lambda labels: labels.get(key) != value
        return lambda labels: labels.get(key) == value
    m = _SET_RE.match(text)
    if not m:
        raise KubeError(400, f"unable to parse requirement: {text.strip()!r}")
    neg, key, op, values = m.groups()
    if op:
        allowed = {v.strip() for v in values.split(",")}
        if op == "in":
            return lambda labels: labels.get(key) in allowed
        return lambda labels: labels.get(key) not in allowed
    if neg:
        return lambda labels: key not in labels
    return lambda labels: key in labels


def label_selector(text: str | None) -> Pred:
    if not text:
        return lambda labels: True
    preds = [_term(t) for t in _split_terms(text)]
    return lambda labels: all(p(labels) for p in preds)


def match_label_selector(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    """A metav1.LabelSelector object (matchLabels + matchExpressions)."""
    if selector is None:
        return False
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for expr in selector.get("matchExpressions") or []:
        if not match_expression(expr, labels):
            return False
    return True


def match_expression(expr: dict[str, Any], labels: dict[str, str]) -> bool:
    key, op, values = expr.get("key", ""), expr.get("operator", ""), expr.get("values") or []
    if op == "In":
        return labels.get(key) in values
    if op == "NotIn":
        return labels.get(key) not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    if op in ("Gt", "Lt") and key in labels:
        try:
            have, want = int(labels[key]), int(values[0])
        except (ValueError, IndexError):
            return False
        return have > want if op == "Gt" else have < want
    return False


def _field_value(obj: dict[str, Any], path: str) -> str:
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(part)
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)


def field_selector(text: str | None) -> Callable[[dict[str, Any]], bool]:
    if not text:
        return lambda obj: True
    terms = []
    for raw in text.split(","):
        m = re.match(r"^\s*([A-Za-z0-9_.]+)\s*(==|=|!=)\s*(.*?)\s*$", raw)
        if not m:
            raise KubeError(400, f"invalid field selector: {raw!r}")
        terms.append(m.groups())

    def pred(obj: dict[str, Any]) -> bool:
        for path, op, value in terms:
            have = _field_value(obj, path)
            if (have == value) != (op != "!="):
                return False
        return True

    return pred
