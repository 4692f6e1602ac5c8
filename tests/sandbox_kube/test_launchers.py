"""Launchers read only the variables their sources read (sandbox/src/podplane_sandbox/kube/
launchers.py), and Kubeflow's operator hands out the rendezvous as its envvar.go does (pure)."""

from __future__ import annotations

from typing import Any

from podplane_sandbox.kube.controllers.kubeflow_training import rendezvous
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
