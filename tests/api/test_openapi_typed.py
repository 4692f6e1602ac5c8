"""The OpenAPI document names every field: no response, and no property, is an object of
unknown shape (`{}` or `{"type": "object"}` without properties). The console's types are
generated from this document, so an untyped object would be named by hand there."""

from __future__ import annotations

from typing import Any

# Free-form on purpose, each with its reason. A name is "<Schema>.<property>".
FREE_FORM = {
    # Each workflow step reports its own facts (ids it created, counts it saw): the step, not
    # the API, owns that shape, and operations of every kind share StepOut.
    "StepOut.detail": "per-step facts, owned by each workflow step",
    "OperationOut.result": "the finished operation's facts, owned by its workflow",
    "MutationOut.result": "same as OperationOut.result",
    "JobMutationOut.result": "same as OperationOut.result",
    "EndpointMutationOut.result": "same as OperationOut.result",
    "PoolMutationOut.result": "same as OperationOut.result",
    "DownloadMutationOut.result": "same as OperationOut.result",
    "SpaceMutationOut.result": "same as OperationOut.result",
    # The Kubernetes objects an endpoint applies, and the engine's OpenAI-compatible answer:
    # their schemas are Kubernetes' and the engine's, not ours.
    "CreatePlanOut.manifests": "the Kubernetes objects, shown as applied",
    "UpdatePlanOut.manifest": "the Deployment, shown as applied",
    "AutoscaleChangeOut.to": "the KEDA ScaledObject, shown as applied",
    "PoolPlanOut.manifest": "the pool's Deployment, shown as applied",
    "PoolPlanOut.service": "the endpoint's Service, shown as applied",
    "DownloadPlanOut.manifest": "the download's Job, shown as applied",
    "SpacePlanOut.manifest": "the space's Workspace, shown as applied",
    "TemplatePlanOut.manifest": "the space template's WorkspaceTemplate, shown as applied",
    "InvokeOut.response": "the engine's OpenAI-compatible answer, passed through",
    # A training job's Kubernetes object as it is applied (HyperPodPyTorchJob or PyTorchJob),
    # shown in the plan for review; its schema is the operator's CRD, not ours.
    "SubmitPlanOut.manifest": "the Kubernetes object, shown as applied",
    "FeatureMutationOut.result": "same as OperationOut.result",
    "NcclStartOut.result": "same as OperationOut.result (the verdict: GET .../nccl/{op_id})",
    # Audit rows keep what the service chose to record with the action.
    "AuditOut.detail": "per-action audit facts",
    # The instance group exactly as SageMaker's UpdateCluster receives it (botocore
    # ClusterInstanceGroupSpecification), shown in a plan for review.
    "AddGroupPlanOut.instance_group": "the AWS request shape, shown as sent",
    # FastAPI's own validation-error model (we answer problem+json instead).
    "ValidationError.ctx": "FastAPI's built-in model",
    "ValidationError.input": "FastAPI's built-in model",
}


def untyped(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    if schema == {} or set(schema) <= {"title", "description", "default"}:
        return True
    if schema.get("type") != "object" or "properties" in schema:
        return False
    extra = schema.get("additionalProperties")
    return not isinstance(extra, dict) and extra is not False


def findings(schema: Any, where: str, out: list[str]) -> list[str]:
    """Every place under `schema` that is untyped (anyOf/items/maps walked through)."""
    if not isinstance(schema, dict):
        return out
    if untyped(schema):
        out.append(where)
    for name, prop in schema.get("properties", {}).items():
        findings(prop, f"{where}.{name}", out)
    for key in ("items", "additionalProperties"):
        findings(schema.get(key), where, out)
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        for option in schema.get(key, []):
            findings(option, where, out)
    return out


def untyped_places(doc: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for path, ops in doc["paths"].items():
        for method, op in ops.items():
            for code, answer in op.get("responses", {}).items():
                if code.startswith("2") and code != "204" and not answer.get("content"):
                    out.append(f"{method.upper()} {path} {code} (no body schema)")
                for media in answer.get("content", {}).values():
                    findings(media.get("schema"), f"{method.upper()} {path} {code}", out)
    for name, schema in doc["components"]["schemas"].items():
        for prop, sub in schema.get("properties", {}).items():
            findings(sub, f"{name}.{prop}", out)
    return out


async def test_no_response_or_property_is_an_untyped_object(app) -> None:  # type: ignore[no-untyped-def]
    places = untyped_places(app.openapi())
    assert [p for p in places if p not in FREE_FORM] == []
    assert set(FREE_FORM) <= set(places), "an allow-listed place is typed now: drop it"


def test_the_check_finds_an_untyped_response_and_property() -> None:
    doc = {"paths": {"/x": {"get": {"responses": {"200": {"content": {"application/json": {
        "schema": {"type": "object", "additionalProperties": True}}}}}}}},
        "components": {"schemas": {"A": {"properties": {
            "free": {"anyOf": [{"type": "object"}, {"type": "null"}]},
            "any": {"items": {}, "type": "array"},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}}}}}}}
    assert untyped_places(doc) == ["GET /x 200", "A.free", "A.any"]
    doc["paths"]["/x"]["get"]["responses"]["200"] = {"description": "whatever"}
    assert untyped_places(doc) == ["GET /x 200 (no body schema)", "A.free", "A.any"]
