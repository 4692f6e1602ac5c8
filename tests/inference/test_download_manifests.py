"""The download's Job and Secret as rendered: the Job validates as a batch/v1 Job, names the
token's Secret and never its value, writes through the bucket claim at models/<name>; the
request's repr and public view hide the token; an S3 or JumpStart source resolves to a bucket
and a prefix, read from another bucket through a read-only volume of its own."""

from __future__ import annotations

import pytest
from pydantic import SecretStr, TypeAdapter, ValidationError

from podplane.domain.errors import InvalidInput
from podplane.domain.inference import download_sources as ds
from podplane.domain.inference import downloads as dl
from podplane.domain.inference import source_paths
from podplane.domain.inference.downloads import DownloadRequest
from podplane.domain.inference.requests import EndpointRequest

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


def test_an_s3_source_names_a_bucket_and_a_prefix() -> None:
    assert ds.s3_source("s3://other.bucket-1/staging/llm/") == ds.S3Source("other.bucket-1",
                                                                         "staging/llm")
    assert ds.s3_source("org/tiny") is None
    for bad in ("s3://Bad_Bucket/llm", "s3://podplane-b/", "s3://-x-/a"):
        with pytest.raises(InvalidInput) as err:
            ds.s3_source(bad)
        assert err.value.extra["field"] == "source"


MANIFEST = [{"model_id": "m", "version": "1.2.0", "spec_key": "s/m/specs_v1.2.0.json"},
            {"model_id": "m", "version": "1.10.0", "spec_key": "s/m/specs_v1.10.0.json"},
            {"model_id": "other", "version": "9.0.0", "spec_key": "s/o.json"}]


def test_a_jumpstart_version_is_the_one_asked_or_the_newest() -> None:
    assert ds.jumpstart_id("jumpstart:m@1.2.0") == ("m", "1.2.0")
    assert ds.jumpstart_id("jumpstart:m") == ("m", None)
    assert ds.spec_key(MANIFEST, "m", None) == "s/m/specs_v1.10.0.json"  # 10 > 2, not text
    assert ds.spec_key(MANIFEST, "m", "1.2.0") == "s/m/specs_v1.2.0.json"
    for model, version, words in (("m", "3.0.0", "1.10.0, 1.2.0"), ("nope", None, "no model")):
        with pytest.raises(InvalidInput) as err:
            ds.spec_key(MANIFEST, model, version)
        assert words in err.value.message and err.value.extra["field"] == "source"


def test_only_uncompressed_ungated_jumpstart_artifacts_are_downloaded() -> None:
    spec = {"hosting_artifact_key": "a/old.tar.gz", "hosting_prepacked_artifact_key": "a/m/v1/",
            "hosting_artifact_s3_data_type": "S3Prefix", "gated_bucket": False}
    assert ds.artifact_prefix(spec, "m") == "a/m/v1"
    for change, words in (({"gated_bucket": True}, "gated"),
                          ({"hosting_artifact_s3_data_type": "S3Object"}, "archive"),
                          # it would be the Job's subPath, which Kubernetes refuses with '..'
                          ({"hosting_prepacked_artifact_key": "a/../b/"}, ". or .."),
                          ({"hosting_prepacked_artifact_key": "./"}, ". or ..")):
        with pytest.raises(InvalidInput) as err:
            ds.artifact_prefix({**spec, **change}, "m")
        assert words in err.value.message


def test_landed_needs_config_and_weights() -> None:
    objs = [{"Key": "models/m/config.json", "Size": 10},
            {"Key": "models/m/model.safetensors", "Size": 0}]
    found = dl.landed(objs, "models/m/")
    assert found["missing"] == ["a weights file (*.safetensors, *.bin, *.gguf)"]
    assert found["empty"] == ["model.safetensors"]
    objs[1]["Size"] = 5
    assert dl.landed(objs, "models/m/") == {"files": 2, "bytes": 15, "missing": [],
                                            "empty": []}


def test_another_buckets_volume_is_read_only_and_bound_to_its_claim() -> None:
    from tests.inference.test_manifests import strict

    pv, pvc = ds.source_volume("dl-tiny-1", "their-bucket", None, dl.labels("tiny"))
    assert strict(pv, "V1PersistentVolume", "PersistentVolume") == []
    assert strict(pvc, "V1PersistentVolumeClaim", "PersistentVolumeClaim") == []
    assert pv["spec"]["csi"]["volumeAttributes"] == {"bucketName": "their-bucket"}
    assert pv["spec"]["mountOptions"] == ["read-only"]
    assert pv["spec"]["claimRef"]["name"] == pvc["metadata"]["name"] == pvc["spec"]["volumeName"]
    job = dl.job({"name": "tiny", "source": "s3://their-bucket/x"}, "dl-tiny-1", None, "1", "x",
                 "dl-tiny-1-src")
    spec = job["spec"]["template"]["spec"]
    mount = next(m for m in spec["containers"][0]["volumeMounts"] if m["mountPath"] == dl.SOURCE)
    volume = next(v for v in spec["volumes"] if v["name"] == mount["name"])
    assert mount["readOnly"] and mount["subPath"] == "x"
    assert volume["persistentVolumeClaim"] == {"claimName": "dl-tiny-1-src", "readOnly": True}
    assert strict(job, "V1Job", "Job") == []


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


@pytest.mark.parametrize("source", [
    "s3://bkt/models/..", "s3://bkt/.", "s3://bkt/models/./x", "s3://bkt/a/../../etc", "fsx:.",
    "fsx:models/..", "fsx:/a/./b"])
def test_a_model_source_path_with_dot_segments_is_refused(source: str) -> None:
    """source_paths.py: the path becomes a subPath (kubernetes validateLocalDescendingPath
    refuses '..'), a modelLocation or an S3 prefix; refused in the request on every face."""
    assert source_paths.refusal(source) is not None
    with pytest.raises(ValidationError, match="may not have . or .. segments"):
        TypeAdapter(EndpointRequest).validate_python(
            {"name": "e", "instance_group": "g", "model": source})
    with pytest.raises(ValidationError, match="source"):
        TypeAdapter(DownloadRequest).validate_python({"name": "m", "source": source})


@pytest.mark.parametrize("source", ["s3://bkt/models/llama..3/", "fsx:models/a.b", "org/name",
                                    "jumpstart:m@1.0.0", "s3://bkt/models/x/"])
def test_a_model_source_path_that_descends_is_kept(source: str) -> None:
    assert source_paths.refusal(source) is None
