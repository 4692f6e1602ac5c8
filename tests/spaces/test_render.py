"""A space as the operator's objects, and its state read back (pure)."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from podplane.domain.errors import InvalidInput
from podplane.domain.spaces import passes, render, templates, views
from podplane.domain.spaces.requests import SpaceRequest

REQUEST = TypeAdapter(SpaceRequest)


def _ws(**spec: object) -> dict[str, object]:
    return render.workspace("c1", templates.choose(REQUEST.validate_python({"name": "nb",
                                                                           **spec}), None))


def test_a_first_space_mounts_home_and_the_bucket_at_the_jobs_paths() -> None:
    ws = _ws()
    spec = ws["spec"]
    assert ws["kind"] == "Workspace" and ws["metadata"]["namespace"] == "default"
    assert "storage" not in spec   # the operator would delete that claim with the space
    assert {v["mountPath"]: v["persistentVolumeClaimName"] for v in spec["volumes"]} == {
        render.HOME: "space-nb-home", "/data": "space-data", "/models": "space-models",
        "/outputs": "space-outputs"}
    claim = render.home_claim("nb", 20)
    assert claim["spec"]["resources"]["requests"]["storage"] == "20Gi"
    assert claim["spec"]["storageClassName"] == "space-home"
    assert spec["image"].endswith("-cpu") and render.GPU not in spec["resources"]["requests"]
    assert "--ServerApp.base_url=/spaces/c1/nb/" in spec["containerConfig"]["args"]
    token = spec["env"][0]
    assert token["name"] == "JUPYTER_TOKEN" and \
        token["valueFrom"]["secretKeyRef"]["name"] == "space-nb-token"
    assert spec["idleShutdown"]["idleTimeoutInMinutes"] == 60


def test_gpus_pick_the_gpu_image_and_the_group() -> None:
    spec = _ws(gpus=2, instance_group="gpu")["spec"]
    assert spec["image"].endswith("-gpu")
    assert spec["resources"]["limits"][render.GPU] == "2"
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    keys = {e["key"]: e["values"] for e in terms["nodeSelectorTerms"][0]["matchExpressions"]}
    assert keys["sagemaker.amazonaws.com/instance-group-name"] == ["gpu"]


def test_idle_zero_never_stops() -> None:
    assert "idleShutdown" not in _ws(idle_minutes=0)["spec"]


@pytest.mark.parametrize("field,value", [
    ("name", "Bad_Name"), ("name", "x" * 41), ("cpu", "$(reboot)"), ("memory", "4G; rm"),
    ("display_name", "<script>"), ("gpus", 9), ("storage_gib", 0), ("app", "rstudio"),
])
def test_hostile_or_wrong_values_are_refused(field: str, value: object) -> None:
    with pytest.raises(ValidationError):
        REQUEST.validate_python({"name": "nb", field: value})


def _with(conditions: list[tuple[str, str]], desired: str = "Running") -> dict[str, object]:
    ws = _ws()
    ws["spec"]["desiredStatus"] = desired
    ws["status"] = {"conditions": [{"type": t, "status": s} for t, s in conditions]}
    return ws


@pytest.mark.parametrize("conditions,desired,state", [
    ([("Available", "True")], "Running", "Running"),
    ([("Progressing", "True")], "Running", "Starting"),
    ([("Available", "True")], "Stopped", "Stopping"),
    ([("Stopped", "True")], "Stopped", "Stopped"),
    ([("Degraded", "True"), ("Progressing", "True")], "Running", "Failed"),
])
def test_state_follows_the_operators_conditions(
        conditions: list[tuple[str, str]], desired: str, state: str) -> None:
    assert views.state_of(_with(conditions, desired))[0] == state


def test_a_space_made_with_hyp_is_shown_as_someone_elses() -> None:
    arn = "arn:aws:iam::1:role/x"
    ws = {"metadata": {"name": "theirs", "annotations": {views.CREATED_BY: arn}},
          "spec": {"displayName": "Theirs"}}
    seen = views.view("c1", ws, [])
    assert seen.made_by == "other" and seen.created_by == arn
    assert seen.state == "Starting" and seen.mounts == [] and seen.storage is None


def test_passes_are_refused_when_forged_expired_or_of_another_kind() -> None:
    key, grant = b"k" * 32, passes.Pass("ticket", "c1", "nb", "tok", "ann", "n1", 100.0)
    sealed = passes.seal(key, grant)
    assert passes.unseal(key, sealed, "ticket", 99.0) == grant
    assert passes.unseal(key, sealed, "ticket", 100.0) is None          # expired
    assert passes.unseal(key, sealed, "session", 99.0) is None          # not a session
    assert passes.unseal(b"x" * 32, sealed, "ticket", 99.0) is None     # another key
    body, _, mac = sealed.rpartition(".")
    assert passes.unseal(key, body[:-2] + "xx." + mac, "ticket", 99.0) is None
    assert "=" not in sealed and ";" not in sealed   # a cookie value as it is


@pytest.mark.parametrize("host,found", [
    ("nb.c1.localhost:3099", ("nb", "c1")), ("NB.C1.localhost", ("nb", "c1")),
    ("localhost:3099", None), ("c1.localhost", None), ("a.b.c1.localhost", None),
    ("nb.c1.localhost.evil.com", None), ("127.0.0.1:3099", None),
])
def test_only_a_space_host_names_a_space(host: str, found: tuple[str, str] | None) -> None:
    assert passes.parse_host(host, "localhost") == found


def test_a_spaces_link_follows_the_public_url() -> None:
    from types import SimpleNamespace

    from podplane.services.spaces.gateway import space_origin
    from podplane.settings import Settings

    local = SimpleNamespace(settings=Settings(port=3099))
    assert space_origin(local, "c1", "nb") == "http://nb.c1.localhost:3099"  # type: ignore[arg-type]
    public = SimpleNamespace(settings=Settings(public_url="https://pp.example.com",
                                               spaces_domain="spaces.example.com"))
    assert space_origin(public, "c1", "nb") == "https://nb.c1.spaces.example.com"  # type: ignore[arg-type]


def test_a_template_fills_what_a_space_leaves_out_and_bounds_what_it_asks() -> None:
    tpl = templates.view(templates.template(templates.TemplateRequest(
        name="t", images=["r/lab:1"], memory="2Gi", max_cpu="2", max_gpus=1,
        storage_gib=5, max_storage_gib=10, idle_minutes=0)))
    chosen = templates.choose(REQUEST.validate_python({"name": "nb", "template": "t"}), tpl)
    assert (chosen.image, chosen.cpu, chosen.memory, chosen.storage_gib,
            chosen.idle_minutes) == ("r/lab:1", "1", "2Gi", 5, 0)
    ws = render.workspace("c1", chosen)
    assert ws["spec"]["templateRef"] == {"name": "t"} and "idleShutdown" not in ws["spec"]
    for asked, field in (({"cpu": "2500m"}, "cpu"), ({"gpus": 2}, "gpus"),
                         ({"image": "r/other:1"}, "image")):
        with pytest.raises(InvalidInput) as refused:
            templates.choose(REQUEST.validate_python({"name": "nb", **asked}), tpl)
        assert refused.value.extra["field"] == field
