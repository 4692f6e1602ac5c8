"""The rendered Kubeflow operators through kubectl against the sandbox's API server: the CRDs
register and serve their kinds, a PyTorchJob and an MPIJob are accepted with their pod templates
whole, a malformed one is refused with the field path, and both operators become Available."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from podplane.domain import manifests
from podplane.domain.dependencies import CORE_UNITS
from tests.sandbox_kube.conftest import FakeNodeSource, Sandbox

UNITS = [u for u in CORE_UNITS if u.name in ("kubeflow-training-operator", "mpi-operator")]
TEMPLATE = {"spec": {"containers": [{"name": "pytorch", "image": "docker.io/pytorch/pytorch:"
                                     "2.5.1-cuda12.4-cudnn9-runtime",
                                     "command": ["torchrun", "train.py"],
                                     "resources": {"limits": {"nvidia.com/gpu": 8}}}]}}


def _pytorchjob(name: str, replicas: object) -> str:
    return json.dumps({
        "apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"nprocPerNode": "8", "runPolicy": {"cleanPodPolicy": "None"},
                 "pytorchReplicaSpecs": {"Worker": {"replicas": replicas,
                                                    "restartPolicy": "OnFailure",
                                                    "template": TEMPLATE}}}})


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    sandbox = Sandbox(tmp_path_factory.mktemp("kf"), FakeNodeSource(count=1))
    for unit in UNITS:  # one object at a time, in order, as podplane applies them
        for obj in manifests.for_unit(unit.name, unit.version or "", "us-west-2"):
            sandbox.kubectl("apply", "--server-side", "--field-manager", "podplane", "-f", "-",
                            input=json.dumps(obj))
    sandbox.advance(5)
    yield sandbox
    sandbox.stop()


def test_operators_are_available(box: Sandbox) -> None:
    for ns, name in (("kubeflow", "dependencies-training-operators"),
                     ("kube-system", "dependencies-mpi-operator")):
        out = box.kubectl("get", "deployment", name, "-n", ns, "-o",
                          "jsonpath={.status.availableReplicas}").stdout
        assert out == "1", (ns, name)
    pods = json.loads(box.kubectl("get", "pods", "-n", "kubeflow", "-o", "json").stdout)
    assert [p["spec"]["containers"][0]["image"] for p in pods["items"]] == [
        "kubeflow/training-operator:v1-855e096"]


def test_pytorchjob_is_accepted_whole_and_listed_with_upstreams_columns(box: Sandbox) -> None:
    box.kubectl("create", "-f", "-", input=_pytorchjob("train", 2))
    stored = json.loads(box.kubectl("get", "pytorchjob", "train", "-o", "json").stdout)
    worker = stored["spec"]["pytorchReplicaSpecs"]["Worker"]
    assert worker["template"] == TEMPLATE  # the open pod template is not pruned
    assert stored["spec"]["runPolicy"]["suspend"] is False  # the CRD's default
    header = box.kubectl("get", "pytorchjobs").stdout.splitlines()[0].split()
    assert header == ["NAME", "STATE", "AGE"]


def test_malformed_pytorchjob_is_refused_with_the_field(box: Sandbox) -> None:
    done = box.kubectl("create", "-f", "-", input=_pytorchjob("bad", "two"), check=False)
    assert done.returncode != 0
    assert "spec.pytorchReplicaSpecs.Worker.replicas" in done.stderr
    assert "must be of type integer" in done.stderr
    assert box.kubectl("get", "pytorchjob", "bad", check=False).returncode != 0


def test_mpijob_gets_the_operators_defaults(box: Sandbox) -> None:
    job = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob",
           "metadata": {"name": "allreduce", "namespace": "default"},
           "spec": {"mpiReplicaSpecs": {"Launcher": {"replicas": 1, "template": TEMPLATE},
                                        "Worker": {"replicas": 2, "template": TEMPLATE}}}}
    box.kubectl("create", "-f", "-", input=json.dumps(job))
    spec = json.loads(box.kubectl("get", "mpijob", "allreduce", "-o", "json").stdout)["spec"]
    assert (spec["slotsPerWorker"], spec["mpiImplementation"]) == (1, "OpenMPI")
    assert spec["mpiReplicaSpecs"]["Worker"]["template"] == TEMPLATE


def test_a_name_kubeflow_refuses_gets_a_warning_and_nothing_else(box: Sandbox) -> None:
    """kubeflow/training-operator ValidateV1PyTorchJob (DNS-1035 names): the API server takes
    the job, the operator records FailedValidation and makes no status and no pod."""
    box.kubectl("create", "-f", "-", input=_pytorchjob("1train", 1))
    box.advance(5)
    stored = json.loads(box.kubectl("get", "pytorchjob", "1train", "-o", "json").stdout)
    assert not (stored.get("status") or {}).get("conditions"), stored.get("status")
    pods = json.loads(box.kubectl("get", "pods", "-l", "training.kubeflow.org/job-name=1train",
                                  "-o", "json").stdout)
    assert pods["items"] == []
    events = json.loads(box.kubectl("get", "events", "-o", "json").stdout)["items"]
    found = [e for e in events if e["involvedObject"]["name"] == "1train"]
    assert [(e["type"], e["reason"]) for e in found] == [
        ("Warning", "PyTorchJobFailedValidation")], found
    assert found[0]["message"].startswith("PyTorchJob failed validation because PyTorchJob "
                                          "name is invalid: [a DNS-1035 label must consist")


def test_validate_v1_pytorchjob_rules_in_its_order() -> None:
    from podplane_sandbox.kube.controllers.kubeflow_validation import name_errors, refusal

    assert name_errors("train-2") == [] and name_errors("a") == []
    assert len(name_errors("2train")) == len(name_errors("train-")) == 1
    assert name_errors("a" * 64) == ["must be no more than 63 characters"]
    job = json.loads(_pytorchjob("ok", 1))
    assert refusal(job) is None
    specs = job["spec"]["pytorchReplicaSpecs"]
    specs["Master"] = {"replicas": 2, "template": TEMPLATE}
    assert refusal(job) == ("PyTorchJob failed validation because PyTorchJobSpec is not "
                            "valid: There must be only 1 master replica")
    specs["Master"] = {"replicas": 1, "template": {"spec": {"containers": [
        {"name": "trainer", "image": "x"}]}}}
    assert refusal(job).endswith("There is no container named pytorch in Master")  # type: ignore[union-attr]
