"""Launchers read only the variables their sources read (sandbox/src/podplane_sandbox/kube/
launchers.py), and Kubeflow's operator hands out the rendezvous as its envvar.go does (pure)."""

from __future__ import annotations

from typing import Any

from podplane_sandbox.kube.controllers.kubeflow_training import rendezvous
from podplane_sandbox.kube.image_contents import StartFailure, start_failure
from podplane_sandbox.kube.launchers import Ranks, expand, ranks

TEMPLATE = {"spec": {"containers": [{"name": "pytorch", "image": "x"}]}}


def _job(workers: int, nproc: str = "1", **spec: Any) -> dict[str, Any]:
    specs = {"Master": {"replicas": 1, "template": TEMPLATE}}
    if workers:
        specs["Worker"] = {"replicas": workers, "template": TEMPLATE}
    return {"metadata": {"name": "j"}, "spec": {"nprocPerNode": nproc,
                                                "pytorchReplicaSpecs": specs, **spec}}


def _container(command: list[str], env: dict[str, str], gpus: int = 1) -> dict[str, Any]:
    return {"name": "pytorch", "command": command,
            "env": [{"name": k, "value": v} for k, v in env.items()],
            "resources": {"limits": {"nvidia.com/gpu": gpus}}}


def test_kubeflow_hands_out_master_rank_world_and_pet_variables() -> None:
    env = {e["name"]: e["value"] for e in rendezvous(_job(2, "4"), 2)}
    assert env == {"PYTHONUNBUFFERED": "1", "MASTER_PORT": "23456", "PET_MASTER_PORT": "23456",
                   "MASTER_ADDR": "j-master-0", "PET_MASTER_ADDR": "j-master-0",
                   "WORLD_SIZE": "12", "RANK": "2", "PET_NPROC_PER_NODE": "4",
                   "PET_NODE_RANK": "2", "PET_NNODES": "3"}
    elastic = {e["name"]: e["value"] for e in rendezvous(
        _job(1, elasticPolicy={"minReplicas": 1, "maxReplicas": 2}), 0)}
    assert elastic["PET_NNODES"] == "1:2"


def test_each_launcher_reads_only_its_own_variables() -> None:
    kubeflow = {e["name"]: e["value"] for e in rendezvous(_job(1), 1)}
    forced = {"FORCE_TORCHRUN": "1", **kubeflow}
    # llamafactory-cli passes --nnodes/--node_rank itself: Kubeflow's variables do not count
    assert ranks(_container(["llamafactory-cli", "train"], forced)) == Ranks(0, 1, 1)
    told = {"FORCE_TORCHRUN": "1", "NNODES": "2", "NPROC_PER_NODE": "1", **kubeflow}
    assert ranks(_container(["env", "NODE_RANK=$(RANK)", "llamafactory-cli", "train"],
                            told)) == Ranks(1, 2, 1)
    # an env entry cannot refer to one defined after it: the reference stays as written
    assert expand("$(RANK)", {}) == "$(RANK)" and expand("$$(RANK)", {"RANK": "1"}) == "$(RANK)"
    # without FORCE_TORCHRUN and one GPU: one process
    assert ranks(_container(["llamafactory-cli", "train"], told | {"FORCE_TORCHRUN": "0"})) \
        == Ranks(0, 1, 1)
    # swift: torchrun only with NPROC_PER_NODE or NNODES; torchrun then reads PET_NODE_RANK
    assert ranks(_container(["swift", "sft"], kubeflow)) == Ranks(0, 1, 1)
    assert ranks(_container(["swift", "sft"], {"NPROC_PER_NODE": "8", **kubeflow}, 8)) == \
        Ranks(1, 2, 8)
    # torchrun: flags, then PET_*, then defaults; the script's own flags are not torchrun's
    assert ranks(_container(["torchrun", "--nproc-per-node=gpu", "t.py", "--nnodes", "9"],
                            kubeflow, 4)) == Ranks(1, 2, 4)
    assert ranks(_container(["bash", "-c", "echo hi\nexec torchrun /tmp/t.py\n"],
                            kubeflow)) == Ranks(1, 2, 1)
    assert ranks(_container(["python3", "train.py"], kubeflow)) is None


# -- images have contents (kube/image_contents.py) --------------------------------------------

PYTORCH = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
RUNC_NOT_FOUND = 'exec: "hyperpodrun": executable file not found in $PATH: unknown'


def _in(image: str, *command: str) -> dict[str, Any]:
    return {"name": "pytorch", "image": image, "command": list(command)}


def test_a_known_image_runs_only_what_it_has() -> None:
    # runc cannot exec a program the image lacks: StartError 128 with containerd's message
    direct = start_failure(_in(PYTORCH, "hyperpodrun", "--nnodes=1", "t.py"))
    assert direct is not None and (direct.exit_code, direct.reason) == (128, "StartError")
    assert direct.message.endswith(RUNC_NOT_FOUND) and not direct.started
    # under a shell, the shell reports it and exits 127; `&&` stops there
    shell = start_failure(_in(PYTORCH, "sh", "-c", "exec hyperpodrun t.py"))
    assert shell == StartFailure(127, "Error", "", "sh: 1: exec: hyperpodrun: not found")
    assert start_failure(_in(PYTORCH, "bash", "-c", "hyperpodrun t.py && echo ok")) == \
        StartFailure(127, "Error", "", "bash: line 1: hyperpodrun: command not found")
    assert start_failure(_in(PYTORCH, "env", "A=1", "hyperpodrun")).exit_code == 127
    # what the image has runs; an unknown image runs anything; no command: its entrypoint
    assert start_failure(_in(PYTORCH, "torchrun", "--nproc-per-node=gpu", "t.py")) is None
    assert start_failure(_in("example.com/mine:1", "hyperpodrun", "t.py")) is None
    assert start_failure(_in(PYTORCH)) is None
    # a missing command followed by `;` goes on: the last command's status counts
    assert start_failure(_in(PYTORCH, "sh", "-c", "hyperpodrun --version; echo ok")) is None


def test_pip_install_adds_its_console_scripts_for_the_rest_of_the_script() -> None:
    installs = "pip install --quiet hyperpod-elastic-agent==1.1.3 && exec hyperpodrun t.py"
    assert start_failure(_in(PYTORCH, "sh", "-c", installs)) is None
    by_module = "python -m pip install hyperpod_elastic_agent\nhyperpodrun t.py"
    assert start_failure(_in(PYTORCH, "bash", "-c", by_module)) is None
    # another package adds nothing; the launcher still sees the last command
    other = "pip install torchvision && exec hyperpodrun t.py"
    assert start_failure(_in(PYTORCH, "sh", "-c", other)).exit_code == 127
    assert ranks(_container(["sh", "-c", "pip install x && exec torchrun --nnodes=3 t.py"],
                            {})) == Ranks(0, 3, 1)
