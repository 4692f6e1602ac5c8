"""podplane's Jobs view and the official HyperPod CLI (`hyp`) see the same jobs: one created
with `hyp create hyp-pytorch-job` is listed by podplane with its pods and logs, and one podplane
submits from a recipe is listed, described and logged by `hyp`."""

from __future__ import annotations

import pytest

from tests.clusters.helpers import BODY
from tests.hyp.conftest import Hyp
from tests.hyp.test_hyp_pytorch_job import IMAGE, listed_pods, settle, status_of
from tests.jobs.conftest import group_of, submit
from tests.stack import Stack

JOBS = f"/api/v1/clusters/{BODY['name']}/jobs"
# an image no recipe uses (the sandbox pulls only images it knows, kube/controllers/images.py)
OWN_IMAGE = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-devel"


@pytest.mark.slow
@pytest.mark.usefixtures("created_world")  # stack: a copy of the run's created cluster
async def test_hyp_and_podplane_see_each_others_jobs(stack: Stack, hyp: Hyp) -> None:
    group = await group_of(stack)
    hyp.run("set-cluster-context", "--cluster-name", BODY["name"])
    hyp.run("create", "hyp-pytorch-job", "--job-name", "from-hyp", "--image", IMAGE,
            "--instance-type", BODY["instance_type"], "--replica-count", "1")
    async with stack.client("operator") as api:
        await submit(api, name="from-podplane", recipe="pytorch-ddp", instance_group=group)
        settle(stack, 20)
        listed = {j["name"]: j for j in (await api.get(JOBS)).json()}
        assert set(listed) == {"from-hyp", "from-podplane"}
        assert listed["from-hyp"]["kind"] == "HyperPodPyTorchJob"
        assert listed["from-hyp"]["recipe"] is None and listed["from-hyp"]["status"] == "Running"
        view = (await api.get(f"{JOBS}/from-hyp")).json()
        assert [p["name"] for p in view["pods"]] == ["from-hyp-pod-0"]
        assert view["pods"][0]["node_verdict"]["health"] == "Schedulable"
        logs = (await api.get(f"{JOBS}/from-hyp/logs")).json()
        assert any("[rank 0] step 10 " in m["line"] for m in logs["lines"]), logs

    assert status_of(hyp, "from-podplane") == "Running"
    described = hyp.run("describe", "hyp-pytorch-job", "--job-name", "from-podplane").stdout
    assert "from-podplane" in described and "pytorch-ddp" in described, described
    assert listed_pods(hyp, "from-podplane") == ["from-podplane-pod-0"]
    logs = hyp.run("get-logs", "hyp-pytorch-job", "--job-name", "from-podplane",
                   "--pod-name", "from-podplane-pod-0").stdout
    assert "initializing process group (backend=nccl, world_size=1)" in logs, logs
    await _your_own_job_is_seen_by_hyp(stack, hyp, group)


async def _your_own_job_is_seen_by_hyp(stack: Stack, hyp: Hyp, group: str) -> None:
    """A bring-your-own HyperPodPyTorchJob (your image and argv; the image lacks the elastic
    agent, so the command installs it first, as the sandbox's image contents require) on the
    GPU `from-podplane` frees when it ends: `hyp` lists, describes and logs it."""
    own = {"kind": "HyperPodPyTorchJob", "image": OWN_IMAGE,
           "command": ["sh", "-c", "pip install hyperpod-elastic-agent==1.1.3 && exec "
                       "hyperpodrun --nnodes=1 --nproc-per-node=1 /data/my_script.py"]}
    async with stack.client("operator") as api:
        for _ in range(60):
            settle(stack, 10)
            if (await api.get(f"{JOBS}/from-podplane")).json()["status"] == "Succeeded":
                break
        await submit(api, name="own-job", instance_group=group, container=own)
        for _ in range(60):
            settle(stack, 10)
            view = (await api.get(f"{JOBS}/own-job")).json()
            if view["status"] in ("Succeeded", "Failed"):
                break
    assert (view["status"], view["recipe"], view["image"]) == ("Succeeded", None, OWN_IMAGE)
    assert status_of(hyp, "own-job") == "Completed"
    described = hyp.run("describe", "hyp-pytorch-job", "--job-name", "own-job").stdout
    assert OWN_IMAGE in described and "'app.kubernetes.io/managed-by': 'podplane'" in described
    logs = hyp.run("get-logs", "hyp-pytorch-job", "--job-name", "own-job",
                   "--pod-name", "own-job-pod-0").stdout
    assert "[rank 0] step 10 " in logs, logs
