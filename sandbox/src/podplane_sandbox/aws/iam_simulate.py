"""IAM SimulatePrincipalPolicy over moto's IAM (moto has no simulator).

Evaluates the identity policies of a user (its inline and attached policies and those of its
groups) or a role, as the IAM policy evaluation logic documents for one account
(https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html):
an explicit Deny wins, else an Allow, else implicitDeny. The sandbox is the stricter one where
it simplifies: a requested resource `*` only matches a statement resource `*`; a condition whose
key the caller did not pass does not match (listed in MissingContextValues, like AWS), except
for `...IfExists` and negated operators; a condition it cannot evaluate (ForAnyValue:,
numeric, date, IP operators) makes an Allow not apply and a Deny apply. Permissions
boundaries, SCPs and resource policies are not modelled.
"""

from __future__ import annotations

import json
import re
from fnmatch import fnmatchcase
from typing import Any
from urllib.parse import parse_qs, unquote
from xml.sax.saxutils import escape

from moto.iam.models import iam_backends

from podplane_sandbox.aws.errors import AwsError

Response = tuple[int, dict[str, str], bytes]
NS = "https://iam.amazonaws.com/doc/2010-05-08/"
_PRINCIPAL = re.compile(r"^arn:(aws[a-z-]*):iam::(\d{12}):(user|role)/(?:.*/)?([\w+=,.@-]+)$")
_STRING_OPS = {"StringEquals": lambda v, p: v == p, "StringLike": fnmatchcase,
               "StringEqualsIgnoreCase": lambda v, p: v.lower() == p.lower(),
               "ArnEquals": lambda v, p: v == p, "ArnLike": fnmatchcase,
               "Bool": lambda v, p: v.lower() == p.lower()}
_NEGATED = {"StringNotEquals": "StringEquals", "StringNotLike": "StringLike",
            "StringNotEqualsIgnoreCase": "StringEqualsIgnoreCase",
            "ArnNotEquals": "ArnEquals", "ArnNotLike": "ArnLike"}


def handles(form: dict[str, list[str]]) -> bool:
    return (form.get("Action") or [""])[0] == "SimulatePrincipalPolicy"


def simulate(body: bytes) -> Response:
    form = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
    try:
        results = _evaluate(form)
    except AwsError as err:
        return _error(err)
    return 200, {"Content-Type": "text/xml"}, _xml(results)


def _evaluate(form: dict[str, list[str]]) -> list[dict[str, Any]]:
    source = _one(form, "PolicySourceArn")
    actions = _members(form, "ActionNames")
    if not source or not actions:
        raise AwsError("ValidationError", "PolicySourceArn and ActionNames are required.", 400)
    statements = _statements(source)
    resources = _members(form, "ResourceArns") or ["*"]
    context = _context(form)
    return [_decide(statements, action, resource, context)
            for action in actions for resource in resources]


def _statements(source: str) -> list[dict[str, Any]]:
    m = _PRINCIPAL.match(source)
    if not m:
        raise AwsError("InvalidInput", f"{source} is not the ARN of an IAM user or role.", 400)
    partition, account, kind, name = m.groups()
    backend = iam_backends[account][partition]
    try:
        entity = backend.get_user(name) if kind == "user" else backend.get_role(name)
    except Exception:  # moto raises its own NoSuchEntity type
        raise AwsError("NoSuchEntity", f"The {kind} with name {name} cannot be found.",
                       404) from None
    holders = [entity, *(backend.get_groups_for_user(name) if kind == "user" else [])]
    docs: list[Any] = []
    for holder in holders:
        docs += list(holder.policies.values())
        docs += [next(v.document for v in p.versions if v.is_default)
                 for p in holder.managed_policies.values()]
    return [s for doc in docs for s in _as_list(_parse(doc).get("Statement", []))]


def _decide(statements: list[dict[str, Any]], action: str, resource: str,
            context: dict[str, list[str]]) -> dict[str, Any]:
    missing: set[str] = set()
    matched = {"Allow": False, "Deny": False}
    for stmt in statements:
        if not _applies(stmt, action, resource):
            continue
        verdict = _conditions(stmt, context, missing)
        if verdict is None:  # an operator the sandbox cannot evaluate: a Deny, never an Allow
            verdict = stmt.get("Effect") == "Deny"
        if verdict and stmt.get("Effect") in matched:
            matched[stmt["Effect"]] = True
    decision = ("explicitDeny" if matched["Deny"] else
                "allowed" if matched["Allow"] else "implicitDeny")
    return {"EvalActionName": action, "EvalResourceName": resource, "EvalDecision": decision,
            "MissingContextValues": sorted(missing) if decision != "allowed" else []}


def _applies(stmt: dict[str, Any], action: str, resource: str) -> bool:
    if "Action" in stmt:
        acts = any(fnmatchcase(action.lower(), a.lower()) for a in _as_list(stmt["Action"]))
    else:
        acts = not any(fnmatchcase(action.lower(), a.lower())
                       for a in _as_list(stmt.get("NotAction", [])))
    if "Resource" in stmt:
        res = any(fnmatchcase(resource, r) for r in _as_list(stmt["Resource"]))
    else:
        res = not any(fnmatchcase(resource, r) for r in _as_list(stmt.get("NotResource", [])))
    return acts and res


def _conditions(stmt: dict[str, Any], context: dict[str, list[str]],
                missing: set[str]) -> bool | None:
    """True when every condition matches, False when one does not, None when one cannot be
    evaluated here."""
    for operator, tests in (stmt.get("Condition") or {}).items():
        for key, wanted in tests.items():
            verdict = _condition(operator, key, _as_list(wanted), context, missing)
            if not verdict:
                return verdict
    return True


def _condition(operator: str, key: str, wanted: list[Any], context: dict[str, list[str]],
               missing: set[str]) -> bool | None:
    if_exists = operator.endswith("IfExists")
    base = operator.removesuffix("IfExists")
    negated = base in _NEGATED
    test = _STRING_OPS.get(_NEGATED.get(base, base))
    if test is None:
        return None
    values = context.get(key.lower())  # condition keys are case-insensitive
    if values is None:
        if not (if_exists or negated):
            missing.add(key)
        return if_exists or negated
    hit = any(test(v, str(p)) for v in values for p in wanted)
    return not hit if negated else hit


def _context(form: dict[str, list[str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    n = 1
    while name := _one(form, f"ContextEntries.member.{n}.ContextKeyName"):
        out[name.lower()] = _members(form, f"ContextEntries.member.{n}.ContextKeyValues")
        n += 1
    return out


def _members(form: dict[str, list[str]], prefix: str) -> list[str]:
    out, n = [], 1
    while (value := _one(form, f"{prefix}.member.{n}")) is not None:
        out.append(value)
        n += 1
    return out


def _one(form: dict[str, list[str]], key: str) -> str | None:
    values = form.get(key)
    return values[0] if values else None


def _parse(doc: Any) -> dict[str, Any]:
    if isinstance(doc, dict):
        return doc
    text = doc if doc.lstrip().startswith("{") else unquote(doc)
    parsed = json.loads(text)
    return parsed if isinstance(parsed, dict) else {}


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _xml(results: list[dict[str, Any]]) -> bytes:
    members = "".join(
        "<member>"
        f"<EvalActionName>{escape(r['EvalActionName'])}</EvalActionName>"
        f"<EvalResourceName>{escape(r['EvalResourceName'])}</EvalResourceName>"
        f"<EvalDecision>{r['EvalDecision']}</EvalDecision><MatchedStatements/>"
        "<MissingContextValues>"
        + "".join(f"<member>{escape(k)}</member>" for k in r["MissingContextValues"])
        + "</MissingContextValues></member>" for r in results)
    return (f'<SimulatePrincipalPolicyResponse xmlns="{NS}"><SimulatePrincipalPolicyResult>'
            f"<IsTruncated>false</IsTruncated><EvaluationResults>{members}</EvaluationResults>"
            "</SimulatePrincipalPolicyResult><ResponseMetadata><RequestId>"
            "00000000-0000-4000-8000-000000000000</RequestId></ResponseMetadata>"
            "</SimulatePrincipalPolicyResponse>").encode()


def _error(err: AwsError) -> Response:
    body = (f'<ErrorResponse xmlns="{NS}"><Error><Type>Sender</Type>'
            f"<Code>{escape(err.code)}</Code><Message>{escape(err.message)}</Message></Error>"
            "<RequestId>00000000-0000-4000-8000-000000000000</RequestId></ErrorResponse>")
    return err.status, {"Content-Type": "text/xml"}, body.encode()
