"""Hostile values in every string a request can put on a command line (issue 34, S2; ADR 0017):
every recipe's parameters, the endpoint and pool requests, and a download's S3 source. Each
value is either refused naming its field (without echoing it), or rendered so that it stays one
word: no new flag, no new Hydra override, no shell syntax for KubeRay's `bash -ce` (the RayJob
entrypoint must split back into exactly the recipe's words), and the objects survive a JSON
and a YAML round trip unchanged. Pure: rendering only."""

from __future__ import annotations

import json
import shlex
from dataclasses import asdict
from typing import Any

import pytest
import yaml
from pydantic import TypeAdapter, ValidationError

from podplane.domain.errors import InvalidInput
from podplane.domain.inference.download_sources import s3_source
from podplane.domain.inference.images import check_registry, repository
from podplane.domain.inference.pool import pool_deployment
from podplane.domain.inference.pool_requests import PoolRequest
from podplane.domain.inference.render import render as render_endpoint
from podplane.domain.inference.requests import EndpointRequest
from podplane.domain.jobs.recipes import RECIPES, Recipe
from tests.jobs.conftest import manifest_from

FACTS = {"bucket": "podplane-alpha-bucket", "gpus_per_node": 8, "efa_per_node": 32}
HOSTILE = [
    "$(touch pwned)", "`touch pwned`", "/models/q <(touch pwned) >out", "/data/x; rm -rf /",
    "/models/q\nrm -rf /", "/models/q\r\n---\nkind: Pod", "--config=/etc/passwd", "-rf",
    "/models/q actor_rollout_ref.actor.optim.lr=1", "x=1", "+trainer.x=1", "~trainer",
    "hydra.run.dir=/tmp", "a,b", "'\"", '{"a": 1}', "key: value", "${HOME}", "/models/q #c",
    "a b", "x\x00y", "/models/q&&id", "/models/q|id", "*", "/models/[a]", "/data/../etc/passwd",
    "/models/./x", "/models/../../etc", ".", "..", "/models/-rf", "", "x" * 300,
]
# Lookalikes that are fine: rendered, and must come out as one word each.
BENIGN = ["/models/Qwen2.5-7B", "Qwen/Qwen2.5-7B-Instruct", "/data/gsm8k/train.parquet",
          "/models/a..b", "org/name_v1.0", "gpt2"]


def _words(recipe: Recipe, job: dict[str, Any]) -> list[str]:
    """The command line as the program will see it."""
    if recipe.kind == "RayJob":   # through KubeRay's bash -ce (one shell level)
        return shlex.split(job["spec"]["entrypoint"])
    specs = job["spec"].get("replicaSpecs") or list(job["spec"]["pytorchReplicaSpecs"].values())
    command = list(specs[0]["template"]["spec"]["containers"][0]["command"])
    if command[:2] == ["sh", "-c"]:  # installs first, then execs the recipe's words
        return shlex.split(command[2])
    return command


def _round_trips(obj: Any) -> None:
    assert json.loads(json.dumps(obj)) == obj
    assert yaml.safe_load(yaml.safe_dump(obj)) == obj


def _check_rendered(recipe: Recipe, name: str, value: str, job: dict[str, Any]) -> None:
    words = _words(recipe, job)
    baseline = _words(recipe, manifest_from(_request(recipe, {}), FACTS))
    assert len(words) == len(baseline), (recipe.name, name, value, words)
    for got, plain in zip(words, baseline, strict=True):
        if got == plain:
            continue
        if "=" in plain:   # `--flag=value` or a Hydra `key=value`: the same key
            assert got.split("=", 1)[0] == plain.split("=", 1)[0], (got, plain)
        else:              # a value on its own: never a flag
            assert not got.startswith("-"), got
        assert shlex.quote(got) == got, got   # inert for any further shell too
    _round_trips(job)
    params = json.loads(job["metadata"]["annotations"]["podplane.io/params"])
    assert params[name] == value


def _request(recipe: Recipe, params: dict[str, Any]) -> dict[str, Any]:
    return {"name": "rl", "recipe": recipe.name, "instance_group": "workers", "replicas": 2,
            "params": params}


STRING_PARAMS = [(r, p.name) for r in RECIPES for p in r.params if p.type == "str"]
OTHER_PARAMS = [(r, p.name) for r in RECIPES for p in r.params if p.type != "str"]


@pytest.mark.parametrize(("recipe", "name"), STRING_PARAMS,
                         ids=[f"{r.name}.{n}" for r, n in STRING_PARAMS])
def test_every_string_parameter_refuses_or_confines_hostile_values(recipe: Recipe,
                                                                   name: str) -> None:
    refused = 0
    for value in HOSTILE + BENIGN:
        try:
            job = manifest_from(_request(recipe, {name: value}), FACTS)
        except InvalidInput as e:
            assert e.extra["field"] == f"params.{name}", (value, e.extra)
            assert len(value) < 4 or value not in str(e), "a refusal never echoes the value"
            refused += 1
            continue
        _check_rendered(recipe, name, value, job)
    assert refused >= len(HOSTILE), f"{recipe.name}.{name} accepted a hostile value"


@pytest.mark.parametrize(("recipe", "name"), OTHER_PARAMS[:1] + OTHER_PARAMS[-1:])
def test_typed_parameters_refuse_strings(recipe: Recipe, name: str) -> None:
    for value in ("$(id)", "1; id", "1\n"):
        with pytest.raises(InvalidInput) as e:
            manifest_from(_request(recipe, {name: value}), FACTS)
        assert e.value.extra["field"] == f"params.{name}" and value not in str(e.value)


def test_every_free_text_parameter_declares_its_pattern() -> None:
    loose = [f"{r.name}.{p.name}" for r in RECIPES for p in r.params
             if p.type == "str" and not p.choices and not (p.pattern and p.shape)]
    assert loose == [], "a str parameter needs choices or a pattern and its shape"


ENDPOINT = {"name": "llm", "instance_group": "workers", "model": "Qwen/Qwen2.5-7B-Instruct"}


@pytest.mark.parametrize(("kind", "field"), [
    (EndpointRequest, "model"), (EndpointRequest, "image"), (EndpointRequest, "name"),
    (EndpointRequest, "instance_group"), (PoolRequest, "model"), (PoolRequest, "image")])
def test_endpoint_and_pool_strings_refuse_or_stay_one_argument(kind: type, field: str) -> None:
    adapter = TypeAdapter(kind)
    for value in HOSTILE + BENIGN:
        try:
            request = asdict(adapter.validate_python({**ENDPOINT, field: value}))
        except ValidationError as e:
            assert [err["loc"][-1] for err in e.errors()] == [field]
            continue
        rendered = pool_deployment(request) if kind is PoolRequest else \
            render_endpoint(request)[0]
        _round_trips(rendered)
        container = rendered["spec"]["template"]["spec"]["containers"][0]
        args, plain = container["args"], render_endpoint({**ENDPOINT, "engine": "vllm"})[0][
            "spec"]["template"]["spec"]["containers"][0]["args"]
        assert [a for a in args if a.startswith("-")] == [a for a in plain if a.startswith("-")]
        assert not value.startswith("-") and "\n" not in value


@pytest.mark.parametrize("source", ["s3://models-bucket/..", "s3://models-bucket/.",
                                    "s3://models-bucket/a/../..", "s3://models-bucket/a/./b"])
def test_a_download_source_refuses_dot_segments(source: str) -> None:
    with pytest.raises(InvalidInput) as e:
        s3_source(source)
    assert e.value.extra["field"] == "source"


def test_a_plain_s3_source_still_parses() -> None:
    found = s3_source("s3://models-bucket/llama-3-8b/")
    assert found is not None and (found.bucket, found.key) == ("models-bucket", "llama-3-8b")


@pytest.mark.parametrize(("image", "repo"), [
    ("vllm/vllm-openai:v0.9.1", "docker.io/vllm/vllm-openai"),
    ("ubuntu", "docker.io/library/ubuntu"),
    ("public.ecr.aws/abc/img@sha256:" + "0" * 64, "public.ecr.aws/abc/img"),
    ("localhost:5000/x:1", "localhost:5000/x"),
    ("registry.example.com:443/a/b", "registry.example.com:443/a/b")])
def test_image_references_normalize_as_runtimes_do(image: str, repo: str) -> None:
    assert repository(image) == repo


def test_the_registry_allow_list_refuses_other_images_and_empty_allows_any() -> None:
    allowed = ["public.ecr.aws", "docker.io/vllm"]
    for ok in (None, "public.ecr.aws/x/y:1", "vllm/vllm-openai:latest", "docker.io/vllm/z"):
        check_registry(ok, allowed)
    for bad in ("ubuntu", "docker.io/vllmx/y", "evil.example.com/public.ecr.aws/x",
                "public.ecr.aws.evil.com/x"):
        with pytest.raises(InvalidInput) as e:
            check_registry(bad, allowed)
        assert e.value.extra["field"] == "image"
    check_registry("anything.example.com/x", [])
