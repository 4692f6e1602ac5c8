"""The download's Job and Secret as rendered: the Job validates as a batch/v1 Job, names the
token's Secret and never its value, writes through the bucket claim at models/<name>; the
request's repr and public view hide the token; an s3:// source must be in the bucket."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from podplane.domain.errors import InvalidInput
from podplane.domain.inference import downloads as dl

TOKEN = "hf_SecretSecretSecretSecret0123456789"


def test_the_job_names_the_secret_never_the_token() -> None:
    request = dl.DownloadRequest(name="tiny", source="org/tiny", hf_token=SecretStr(TOKEN))
    job_name, secret_name = dl.names("tiny", "0123abcd")
    job = dl.job(request.public(), job_name, secret_name, "0123abcd", None)
    assert TOKEN not in repr(job) and TOKEN not in repr(request) and \
        TOKEN not in repr(request.public())
    container = job["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e for e in container["env"]}
    assert env["HF_TOKEN"] == {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {
        "name": "dl-tiny-0123abcd-hf", "key": "HF_TOKEN"}}}
    assert env["MODEL_REVISION"]["value"] == "main"
    dest = next(m for m in container["volumeMounts"] if m["mountPath"] == dl.DEST)
    assert dest["subPath"] == "models/tiny"
    assert job["spec"]["backoffLimit"] == 0
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    assert len(job_name) <= 63 - 6  # the pod's `-<5>` suffix


def test_the_secret_holds_the_token_base64() -> None:
    import base64

    secret = dl.secret("dl-tiny-0123abcd-hf", "tiny", SecretStr(TOKEN))
    assert base64.b64decode(secret["data"]["HF_TOKEN"]).decode() == TOKEN
    assert secret["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "podplane"


def test_an_s3_source_must_be_in_the_clusters_bucket() -> None:
    assert dl.source_prefix("s3://podplane-b/staging/llm/", "podplane-b") == "staging/llm"
    assert dl.source_prefix("org/tiny", "podplane-b") is None
    for bad in ("s3://other-bucket/llm", "s3://podplane-b/"):
        with pytest.raises(InvalidInput) as err:
            dl.source_prefix(bad, "podplane-b")
        assert err.value.extra["field"] == "source"


def test_landed_needs_config_and_weights() -> None:
    objs = [{"Key": "models/m/config.json", "Size": 10},
            {"Key": "models/m/model.safetensors", "Size": 0}]
    found = dl.landed(objs, "models/m/")
    assert found["missing"] == ["a weights file (*.safetensors, *.bin, *.gguf)"]
    assert found["empty"] == ["model.safetensors"]
    objs[1]["Size"] = 5
    assert dl.landed(objs, "models/m/") == {"files": 2, "bytes": 15, "missing": [],
                                            "empty": []}


@pytest.mark.parametrize("source_key", [None, "staging/llm"], ids=["hub", "s3"])
def test_job_and_secret_are_valid_kubernetes_objects(source_key: str | None) -> None:
    import json

    from kubernetes.client import ApiClient

    from tests.inference.test_manifests import strict

    request = dl.DownloadRequest(name="tiny", source="org/tiny", hf_token=SecretStr(TOKEN))
    job = dl.job(request.public(), "dl-tiny-1", "dl-tiny-1-hf" if source_key is None else None,
                 "1", source_key)
    secret = dl.secret("dl-tiny-1-hf", "tiny", SecretStr(TOKEN))
    # Secret `data` is base64 text on the wire (the client's type for it is bytes)
    assert all(isinstance(v, str) for v in secret["data"].values())
    assert strict(job, "V1Job", "Job") == []
    assert strict({**secret, "data": {}}, "V1Secret", "Secret") == []
    ApiClient().deserialize(json.dumps(job), "V1Job", "application/json")
