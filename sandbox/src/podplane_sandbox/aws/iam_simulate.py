"""IAM SimulatePrincipalPolicy over moto's IAM (moto has no simulator): the request and the
answer in IAM's query/XML protocol; the decisions come from the sandbox's one policy evaluator
(iam_policy.py, with the caller's context entries taken as complete).

The policies simulated are the identity policies of a user (inline and attached, and those of
its groups) or a role, as IAM's simulator does when no policy input list is given
(https://docs.aws.amazon.com/IAM/latest/APIReference/API_SimulatePrincipalPolicy.html).
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs
from xml.sax.saxutils import escape

from moto.iam.models import iam_backends

from podplane_sandbox.aws.errors import AwsError
from podplane_sandbox.aws.iam_policy import entity_documents, evaluate

Response = tuple[int, dict[str, str], bytes]
NS = "https://iam.amazonaws.com/doc/2010-05-08/"
_PRINCIPAL = re.compile(r"^arn:(aws[a-z-]*):iam::(\d{12}):(user|role)/(?:.*/)?([\w+=,.@-]+)$")


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
    docs = _documents(source)
    resources = _members(form, "ResourceArns") or ["*"]
    context = _context(form)
    out = []
    for action in actions:
        for resource in resources:
            verdict = evaluate(docs, action, resource, context, complete=True)
            out.append({"EvalActionName": action, "EvalResourceName": resource,
                        "EvalDecision": verdict.decision,
                        "MissingContextValues": list(verdict.missing)})
    return out


def _documents(source: str) -> list[dict[str, Any]]:
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
    groups = backend.get_groups_for_user(name) if kind == "user" else []
    return entity_documents([entity, *groups])


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
