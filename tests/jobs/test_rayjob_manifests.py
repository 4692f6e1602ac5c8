"""The VERL recipe's RayJob judged by the upstream KubeRay CRD's schema
(../shared/crds/kuberay/ray.io_rayjobs.yaml, v1), and its parameters: defaults, bounds, the
data contract's paths and cross-field rules, each refusal naming its field."""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

import jsonschema
import pytest
import yaml

from podplane.domain.errors import InvalidInput
from podplane.domain.jobs.recipes import recipe
from tests.clusters.test_kubeflow_manifests import SHARED_CRDS
from tests.jobs.conftest import manifest_from

FACTS = {"bucket": "podplane-alpha-bucket", "gpus_per_node": 8, "efa_per_node": 32}


@cache
def rayjob_schema() -> jsonschema.Draft7Validator:
    """The CRD's v1 schema (checking the 1.4 MB schema itself on every call takes seconds)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    crd = yaml.load((SHARED_CRDS / "kuberay" / "ray.io_rayjobs.yaml").read_text(), loader)
    v1 = next(v for v in crd["spec"]["versions"] if v["name"] == "v1")
    return jsonschema.Draft7Validator(v1["schema"]["openAPIV3Schema"])


def rendered(**params: Any) -> dict[str, Any]:
    return manifest_from({"name": "rl", "recipe": "verl-grpo", "instance_group": "workers",
                          "replicas": 2, "params": params}, FACTS)


def test_the_verl_rayjob_validates_against_the_upstream_crd_which_can_fail() -> None:
    schema = rayjob_schema()
    for params in ({}, {"adv_estimator": "gae", "rollout": "sglang"}):
        job = rendered(**params)
        schema.validate(job)
        spec = job["spec"]
        assert (job["apiVersion"], job["kind"]) == ("ray.io/v1", "RayJob")
        assert spec["submissionMode"] == "K8sJobMode" and spec["shutdownAfterJobFinishes"]
        assert spec["entrypoint"].startswith("python3 -m verl.trainer.main_ppo ")
        assert f"algorithm.adv_estimator={params.get('adv_estimator', 'grpo')}" in \
            spec["entrypoint"]
        assert "trainer.nnodes=2 trainer.n_gpus_per_node=8" in spec["entrypoint"]
        cluster = spec["rayClusterSpec"]
        image = cluster["headGroupSpec"]["template"]["spec"]["containers"][0]["image"]
        assert image == f"rayproject/ray-llm:{cluster['rayVersion']}-py312-cu130"
        assert int(cluster["rayVersion"].split(".")[1]) >= 56  # not an old Ray
        group = cluster["workerGroupSpecs"][0]
        assert group["replicas"] == group["minReplicas"] == group["maxReplicas"] == 2
        limits = group["template"]["spec"]["containers"][0]["resources"]["limits"]
        assert limits == {"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 32}
        head = cluster["headGroupSpec"]["template"]["spec"]["containers"][0]
        assert "nvidia.com/gpu" not in head["resources"]["limits"]
        assert "command" not in head  # KubeRay runs `ray start` in the Ray container
        pip = yaml.safe_load(spec["runtimeEnvYAML"])["pip"]
        assert pip == (["verl[sglang]==0.7.0"] if params else ["verl==0.7.0"])
    broken = copy.deepcopy(rendered())
    broken["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["replicas"] = "two"
    with pytest.raises(jsonschema.ValidationError):
        schema.validate(broken)
    broken = copy.deepcopy(rendered())
    broken["spec"]["rayClusterSpec"]["headGroupSpec"]["rayStartParams"]["num-gpus"] = 0
    with pytest.raises(jsonschema.ValidationError):
        schema.validate(broken)


def test_head_and_workers_mount_the_shared_data_paths_and_are_health_gated() -> None:
    cluster = rendered()["spec"]["rayClusterSpec"]
    templates = [cluster["headGroupSpec"]["template"],
                 cluster["workerGroupSpecs"][0]["template"]]
    for template in templates:
        mounts = {m["mountPath"]: m.get("subPath")
                  for m in template["spec"]["containers"][0]["volumeMounts"]}
        assert mounts == {"/dev/shm": None, "/data": "data", "/models": "models",
                          "/checkpoints": "checkpoints/rl", "/outputs": "outputs/rl"}
        terms = template["spec"]["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
        exprs = {e["key"]: e["values"] for e in terms["matchExpressions"]}
        assert exprs == {"sagemaker.amazonaws.com/node-health-status": ["Schedulable"],
                         "sagemaker.amazonaws.com/instance-group-name": ["workers"]}


def test_verl_parameters_take_defaults_and_refuse_naming_the_field() -> None:
    verl = recipe("verl-grpo")
    assert verl.kind == "RayJob"
    values = verl.resolve({})
    assert (values["adv_estimator"], values["rollout"]) == ("grpo", "vllm")
    assert values["train_files"].startswith("/data/")
    assert verl.resolve({"adv_estimator": "gae"})["adv_estimator"] == "gae"
    cases = [({"adv_estimator": "reinforce"}, "params.adv_estimator"),
             ({"rollout": "hf"}, "params.rollout"),
             ({"train_files": "/etc/passwd"}, "params.train_files"),
             ({"val_files": "/data/../etc/x.parquet"}, "params.val_files"),
             ({"train_batch_size": 0}, "params.train_batch_size"),
             ({"ppo_mini_batch_size": 512, "train_batch_size": 256},
              "params.ppo_mini_batch_size"),
             ({"rollout_n": 65}, "params.rollout_n")]
    for given, field in cases:
        with pytest.raises(InvalidInput) as err:
            verl.resolve(given)
        assert err.value.extra["field"] == field, (given, err.value.extra)
