"""Every manifest podplane renders is judged by an outside source: Kubeflow PyTorchJobs by the
upstream CRD's schema (../shared/crds/kubeflow-training-operator), HyperPodPyTorchJobs by the
official HyperPod SDK's pydantic models (sagemaker-hyperpod, `.venv-hyp`, run in a subprocess:
its pins conflict with ours), whose nested models forbid unknown fields. Also the recipe
parameter rules: defaults, bounds and choices, each refusal naming its field."""

from __future__ import annotations

import ast
import copy
import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from pydantic import ValidationError

from podplane.domain.errors import InvalidInput
from podplane.domain.jobs.recipes import RECIPES, recipe
from podplane.domain.jobs.requests import restored
from podplane.domain.jobs.scripts import SCRIPTS_DIR, config_map
from podplane.domain.jobs.workloads import workload_of
from podplane.services.jobs.scripts import files
from podplane_sandbox.kube.image_contents import start_failure
from tests.clusters.test_kubeflow_manifests import SHARED_CRDS
from tests.hyp.conftest import HYP
from tests.jobs.conftest import manifest_from

HYP_PYTHON = str(Path(HYP).parent / "python")
FACTS = {"bucket": "podplane-alpha-bucket", "gpus_per_node": 8, "efa_per_node": 32}
SDK_CHECK = """
import json, sys
from sagemaker.hyperpod.training.config.hyperpod_pytorch_job_unified_config import (
    _HyperPodPytorchJob as Spec)
out = []
for spec in json.load(sys.stdin):
    extra = sorted(set(spec) - set(Spec.model_fields))  # the top level ignores extras
    try:
        Spec.model_validate(spec, by_name=True, by_alias=False)
        out.append(["unknown top-level field " + f for f in extra])
    except Exception as exc:  # pydantic.ValidationError
        out.append([str(exc)] + extra)
print(json.dumps(out))
"""


def rendered(kind: str) -> list[dict[str, Any]]:
    out = []
    for r in RECIPES:
        if r.kind != kind:
            continue
        for replicas, elastic in ((1, False), (4, r.elastic_capable)):
            out.append(manifest_from({"name": f"j-{r.name}", "recipe": r.name,
                                      "instance_group": "workers", "replicas": replicas,
                                      "max_restarts": 3, "elastic": elastic}, FACTS))
    return out


def sdk_verdicts(specs: list[dict[str, Any]]) -> list[list[str]]:
    done = subprocess.run([HYP_PYTHON, "-c", SDK_CHECK], input=json.dumps(specs),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout))


def pytorchjob_schema() -> dict[str, Any]:
    crd = yaml.safe_load((SHARED_CRDS / "kubeflow-training-operator" /
                          "kubeflow.org_pytorchjobs.yaml").read_text())
    return dict(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"])


@pytest.mark.slow
def test_hyperpod_jobs_pass_the_official_sdk_models_which_can_fail() -> None:
    jobs = [*rendered("HyperPodPyTorchJob"), own("HyperPodPyTorchJob")]
    assert len(jobs) >= 5 and any("elasticPolicy" in j["spec"] for j in jobs)
    assert all(j["apiVersion"] == "sagemaker.amazonaws.com/v1" for j in jobs)
    broken = copy.deepcopy(jobs[0]["spec"])
    broken["runPolicy"]["jobMaxRetries"] = 3  # not a field: the SDK's RunPolicy forbids it
    broken["replicaSpecs"][0]["template"]["spec"]["containers"][0]["gpus"] = 1
    *verdicts, refused = sdk_verdicts([j["spec"] for j in jobs] + [broken])
    assert verdicts == [[] for _ in jobs]
    assert refused and "jobMaxRetries" in refused[0] and "gpus" in refused[0]


def test_kubeflow_jobs_validate_against_the_upstream_crd() -> None:
    schema = pytorchjob_schema()
    jobs = rendered("PyTorchJob")
    assert len(jobs) >= 6
    for job in jobs:
        jsonschema.validate(job, schema)
        specs = job["spec"]["pytorchReplicaSpecs"]
        assert specs["Master"]["replicas"] == 1
        assert all(s["template"]["spec"]["containers"][0]["name"] == "pytorch"
                   for s in specs.values())  # the operator's required container name
    broken = copy.deepcopy(jobs[0])
    broken["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] = "one"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def test_parameters_take_defaults_and_refuse_naming_the_field() -> None:
    lora = recipe("llamafactory-lora")
    assert lora.resolve({})["lora_rank"] == 8
    assert lora.resolve({"lora_rank": 16, "learning_rate": 1})["learning_rate"] == 1.0
    cases = [({"lora_rank": 0}, "params.lora_rank"), ({"lora_rank": "8"}, "params.lora_rank"),
             ({"epochs": True}, "params.epochs"), ({"template": "chatml"}, "params.template"),
             ({"dataset": "/data/x; rm -rf /"}, "params.dataset"), ({"nope": 1}, "params.nope")]
    for given, field in cases:
        with pytest.raises(InvalidInput) as err:
            lora.resolve(given)
        assert err.value.extra["field"] == field, (given, err.value.extra)
    with pytest.raises(InvalidInput) as err:
        recipe("megatron")
    assert err.value.extra["field"] == "recipe"


def test_the_data_contract_is_the_same_in_every_recipe() -> None:
    for job in rendered("PyTorchJob") + rendered("HyperPodPyTorchJob"):
        name = job["metadata"]["name"]
        spec = job["spec"]
        templates = [r["template"] for r in spec.get("replicaSpecs") or []] + \
            [r["template"] for r in (spec.get("pytorchReplicaSpecs") or {}).values()]
        for t in templates:
            mounts = {m["mountPath"]: m.get("subPath")
                      for m in t["spec"]["containers"][0]["volumeMounts"]}
            shipped = {SCRIPTS_DIR: None} if recipe(name.removeprefix("j-")).scripts else {}
            assert mounts == {"/dev/shm": None, "/data": "data", "/models": "models",
                              "/checkpoints": f"checkpoints/{name}",
                              "/outputs": f"outputs/{name}", **shipped}
            limits = t["spec"]["containers"][0]["resources"]["limits"]
            assert limits == {"nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 32}


def _first_container(job: dict[str, Any]) -> dict[str, Any]:
    spec = job["spec"]
    first = (spec.get("replicaSpecs") or [None])[0] or spec["pytorchReplicaSpecs"]["Master"]
    return dict(first["template"]["spec"]["containers"][0])


def _script_flags(source: str) -> set[str]:
    """The options a script's argparse parser declares (read with ast: torch is not here)."""
    return {arg.value for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call)
            and getattr(node.func, "attr", "") == "add_argument"
            for arg in node.args if isinstance(arg, ast.Constant)}


def test_every_recipe_runs_in_its_default_image_with_scripts_podplane_ships() -> None:
    """The sandbox's image contents (kube/image_contents.py): each recipe's launcher is in its
    image, or installed by its own command first (the HyperPod recipes pip-install the elastic
    agent, which has `hyperpodrun`); the training scripts it names are in the package, in its
    ConfigMap, and declare every flag the command passes."""
    for r in RECIPES:
        if r.kind == "RayJob":  # KubeRay builds its pods' commands (test_rayjob_manifests.py)
            continue
        job = manifest_from({"name": f"j-{r.name}", "recipe": r.name,
                             "instance_group": "workers"}, FACTS)
        container = _first_container(job)
        assert start_failure(container) is None, (r.name, start_failure(container))
        words = shlex.split(container["command"][-1]) if r.install else container["command"]
        for name in r.scripts:
            path = f"{SCRIPTS_DIR}/{name}"
            source = files(r)[name]
            assert config_map(job["metadata"]["name"], r.name, files(r))["data"][name] == source
            passed = {w.split("=", 1)[0] for w in words[words.index(path) + 1:]}
            assert passed and passed <= _script_flags(source), (name, passed)
    installs = _first_container(manifest_from({"name": "j", "recipe": "pytorch-fsdp",
                                               "instance_group": "workers"}, FACTS))
    assert installs["command"][:2] == ["sh", "-c"] and installs["command"][2].startswith(
        "pip install --quiet hyperpod-elastic-agent==1.1.3 transformers==4.46.3 && "
        "exec hyperpodrun ")


def test_the_image_is_a_parameter_and_refuses_what_is_not_a_reference() -> None:
    mine = "123456789012.dkr.ecr.us-west-2.amazonaws.com/hyperpod-pytorch:2.5.1"
    job = manifest_from({"name": "j", "recipe": "pytorch-ddp", "instance_group": "workers",
                         "params": {"image": mine}}, FACTS)
    assert _first_container(job)["image"] == mine
    for bad in ("Pytorch:latest", "a b", "x:tag;rm", "-x", "x@sha256:zz"):
        with pytest.raises(InvalidInput) as err:
            recipe("pytorch-ddp").resolve({"image": bad})
        assert err.value.extra["field"] == "params.image", bad


OWN_IMAGE = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"


def own(kind: str, **container: Any) -> dict[str, Any]:
    """A bring-your-own job's manifest as its operation applies it."""
    body = {"kind": kind, "image": OWN_IMAGE, "command": ["python", "/data/my_script.py"],
            "args": ["--epochs", "1"], "env": {"MY_FLAG": "on"}, **container}
    return manifest_from({"name": "mine", "instance_group": "workers", "max_restarts": 4,
                          "container": body}, FACTS)


def _templates(job: dict[str, Any]) -> list[dict[str, Any]]:
    spec = job["spec"]
    if job["kind"] == "RayJob":
        cluster = spec["rayClusterSpec"]
        return [cluster["headGroupSpec"]["template"],
                *(g["template"] for g in cluster["workerGroupSpecs"])]
    return [r["template"] for r in spec.get("replicaSpecs") or []] + \
        [r["template"] for r in (spec.get("pytorchReplicaSpecs") or {}).values()]


def test_your_own_container_gets_a_recipe_jobs_mounts_placement_and_budget() -> None:
    """Everything but the command is the recipe jobs' contract: the bucket's paths (so
    `python /data/my_script.py` reads the bucket), the health-gated group, GPUs and EFA, the
    restart budget; made by podplane without a recipe label; your argv and env as given."""
    budgets = {"HyperPodPyTorchJob": ("runPolicy", "jobMaxRetryCount"),
               "PyTorchJob": ("runPolicy", "backoffLimit"), "RayJob": (None, "backoffLimit")}
    for kind, (section, key) in budgets.items():
        job = own(kind)
        assert job["kind"] == kind and job["metadata"]["labels"] == {
            "app.kubernetes.io/managed-by": "podplane"}
        assert (job["spec"][section] if section else job["spec"])[key] == 4
        for t in _templates(job):
            c = t["spec"]["containers"][0]
            assert c["image"] == OWN_IMAGE
            assert {m["mountPath"]: m.get("subPath") for m in c["volumeMounts"]} == {
                "/dev/shm": None, "/data": "data", "/models": "models",
                "/checkpoints": "checkpoints/mine", "/outputs": "outputs/mine"}
            assert c["env"][-1] == {"name": "MY_FLAG", "value": "on"}
            assert "PODPLANE_RECIPE" not in {e["name"] for e in c["env"]}
            terms = t["spec"]["affinity"]["nodeAffinity"][
                "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
            assert {e["key"]: e["values"] for e in terms[0]["matchExpressions"]} == {
                "sagemaker.amazonaws.com/node-health-status": ["Schedulable"],
                "sagemaker.amazonaws.com/instance-group-name": ["workers"]}
            if kind != "RayJob":
                assert (c["command"], c["args"]) == (["python", "/data/my_script.py"],
                                                     ["--epochs", "1"])
                assert c["resources"]["limits"] == {"nvidia.com/gpu": 8,
                                                    "vpc.amazonaws.com/efa": 32}
    assert own("RayJob")["spec"]["entrypoint"] == "python /data/my_script.py --epochs 1"
    assert "rayVersion" not in own("RayJob")["spec"]["rayClusterSpec"]
    # your log lines are unknown: no start/hang pattern that could fail a healthy job
    assert "logMonitoringConfiguration" not in own("HyperPodPyTorchJob")["spec"]["runPolicy"]
    jsonschema.validate(own("PyTorchJob"), pytorchjob_schema())
    quiet = _first_container(own("PyTorchJob", env={"NCCL_DEBUG": "WARN"}))["env"]
    assert [e["value"] for e in quiet if e["name"] == "NCCL_DEBUG"] == ["WARN"]  # yours, once


def test_your_own_command_runs_only_if_the_image_has_it() -> None:
    """The sandbox's image contents judge your argv as the kubelet would: `python` is in the
    PyTorch image; a program it lacks fails to start (runc: executable file not found)."""
    runs = _first_container(own("PyTorchJob"))
    assert start_failure(runs) is None
    missing = start_failure(_first_container(own("PyTorchJob", command=["deepspeed", "x.py"])))
    assert missing is not None and missing.exit_code == 128
    assert 'exec: "deepspeed": executable file not found in $PATH' in missing.message


def test_your_own_container_is_refused_naming_the_field() -> None:
    base = {"name": "mine", "instance_group": "workers"}
    good = {"image": OWN_IMAGE, "command": ["python", "x.py"]}
    typed = [({"image": "Bad Image"}, ("container", "image")),
             ({"image": "x:tag;rm"}, ("container", "image")),
             ({"command": []}, ("container", "command")),
             ({"command": [""]}, ("container", "command", 0)),
             ({"command": ["x"] * 65}, ("container", "command")),
             ({"args": ["a" * 4097]}, ("container", "args", 0)),
             ({"env": {"1ABC": "x"}}, ("container", "env", "1ABC", "[key]")),
             ({"env": {"A-B": "x"}}, ("container", "env", "A-B", "[key]")),
             ({"kind": "MPIJob"}, ("container", "kind")),
             ({"shell": "sh"}, ("container", "shell"))]
    for change, loc in typed:
        with pytest.raises(ValidationError) as err:
            restored({**base, "container": {**good, **change}})
        assert err.value.errors()[0]["loc"] == loc, (change, err.value.errors())
    huge = {**good, "args": ["a" * 4096] * 9}  # 36 KiB: within each bound, over the total
    checked = [({}, "recipe"), ({"recipe": "pytorch-ddp", "container": good}, "container"),
               ({"container": huge}, "container"),
               ({"container": good, "params": {"epochs": 1}}, "params")]
    for change, field in checked:
        with pytest.raises(InvalidInput) as refused:
            workload_of(restored({**base, **change}))
        assert refused.value.extra["field"] == field, change


def test_your_own_words_reach_the_program_unchanged() -> None:
    """No shell reads an exec-form argv; a RayJob's entrypoint is pasted into `bash -ce`, so
    each word is quoted once and bash gives the program exactly your words (ADR 0017)."""
    words = ["python3", "/data/x.py", "$(touch /tmp/pwned)", "a b; rm -rf /", "it's", "`id`",
             "--flag={x}", "\n"]
    pytorch = _first_container(own("PyTorchJob", command=words, args=[]))
    assert pytorch["command"] == words and "args" not in pytorch
    entrypoint = own("RayJob", command=words, args=[])["spec"]["entrypoint"]
    assert shlex.split(entrypoint) == words
