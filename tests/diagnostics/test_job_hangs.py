"""Job diagnosis of hangs and of what dying workers wrote, on a cluster podplane created (two
g5.8xlarge nodes, training operator installed). Faults are set on the job's pod template with
kubectl, as any tool could: a hung collective (`hang-after-seconds`), and a worker that dies
with PyTorch's NCCL watchdog timeout, a CUDA OOM or an NVIDIA Xid (`crash`,
sandbox/.../controllers/training_crashes.py). What is asserted is read back from Kubernetes,
the sandbox's ledger and HyperPod."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.diagnostics.conftest import perform, sources
from tests.groups.conftest import finish
from tests.jobs.conftest import (  # noqa: F401
    CLUSTER,
    JOBS,
    apply_plan,
    cluster,
    pods,
    settle,
    store,
)
from tests.stack import Stack

pytestmark = pytest.mark.asyncio(loop_scope="module")
XID = "NvidiaErrorReboot:XidHardwareFailure"
HPJOBS = "sagemaker.amazonaws.com/hyperpodpytorchjobs"


def diagnosis(job: str) -> str:
    return f"/api/v1/clusters/{CLUSTER}/diagnostics/jobs/{job}"


async def apply_job(stack: Stack, api: httpx.AsyncClient, tmp: Path, name: str, group: str,
                    replicas: int, max_restarts: int, **annotations: str) -> None:
    """podplane's own manifest (dry run), its pod template annotated, applied with kubectl."""
    r = await api.post(JOBS, params={"dry_run": "true"}, json={
        "name": name, "recipe": "pytorch-ddp", "instance_group": group,
        "replicas": replicas, "max_restarts": max_restarts})
    assert r.status_code == 200, r.text
    manifest = r.json()["plan"]["manifest"]
    template = manifest["spec"]["replicaSpecs"][0]["template"]
    template.setdefault("metadata", {}).setdefault("annotations", {}).update(
        {f"sandbox.podplane.io/{k.replace('_', '-')}": v for k, v in annotations.items()})
    folder = tmp / name
    folder.mkdir()
    apply_plan(stack, folder, r.json()["plan"], manifest)  # its scripts ConfigMap first


def versions(stack: Stack) -> tuple[int, list[str]]:
    """What a read-only diagnosis must leave as it was: the cloud's mutation ledger and
    every training job's resourceVersion."""
    jobs = store(stack).items(HPJOBS, "default")
    return len(stack.ledger()), sorted(f"{j['metadata']['name']}@"
                                       f"{j['metadata']['resourceVersion']}" for j in jobs)


def checks(verdict: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["check"]: f for f in verdict["findings"]}


def proof(finding: dict[str, Any]) -> str:
    return "\n".join(f"{e['source']}: {e['detail']}" for e in finding["evidence"])


async def cleanup(stack: Stack, *jobs: str) -> None:
    async with stack.client("admin") as admin:  # the module's tests leave no job running
        for job in jobs:
            r = await admin.delete(f"{JOBS}/{job}", params={"confirm": "true"})
            assert (await finish(admin, r.json()))["status"] == "succeeded", r.text
    settle(stack, 5)


async def test_silent_workers_read_stalled_then_the_hang_rule_names_its_restarts(
        cluster: tuple[Stack, str], tmp_path: Path) -> None:  # noqa: F811
    stack, group = cluster
    async with stack.client("viewer") as viewer, stack.client("operator") as operator:
        await apply_job(stack, operator, tmp_path, "hung", group, 1, 0, hang_after_seconds="20",
                        duration_seconds="7200")
        await apply_job(stack, operator, tmp_path, "hung-again", group, 1, 1,
                        hang_after_seconds="20", duration_seconds="7200")
        settle(stack, 10)
        fine = (await viewer.get(diagnosis("hung"))).json()
        assert fine["conclusion"] == "healthy" and fine["findings"] == [], fine

        settle(stack, 700)  # silent since 20 s: past the 600 s stall window, before 900 s
        before = versions(stack)
        stalled = (await viewer.get(diagnosis("hung"))).json()
        assert versions(stack) == before  # a viewer's diagnosis changed nothing
        assert stalled["status"] == "fail" and "silent since" in stalled["conclusion"], stalled
        found = checks(stalled)["stalled"]
        (pod,) = pods(stack, HPJob="hung").values()
        assert pod["metadata"]["name"] in proof(found) and pod["spec"]["nodeName"] in proof(found)
        assert "wrote nothing in the last 600 s" in proof(found)
        assert stalled["since"] and f"newest line is from {pod['metadata']['name']} at " \
            f"{stalled['since']}" in proof(found)  # silent since then, as the kubelet stamped
        assert "rule JobHangingDetection" in proof(found) and "every 900 s" in proof(found)
        assert "restarts 0 of 0 spent" in proof(found) and "no restart is left" in found["detail"]
        step = stalled["next"]
        assert step == {"tool": "job_cancel", "arguments": {"cluster": CLUSTER, "job": "hung"},
                        "cost": step["cost"], "mutates": True}
        assert (await perform(viewer, step)).status_code == 403  # a viewer cannot act
        assert versions(stack) == before
        cancelled = await finish(operator, (await perform(operator, step)).json())
        assert cancelled["status"] == "succeeded", cancelled
        settle(stack, 5)
        assert pods(stack, HPJob="hung") == {}  # its GPU is free again
        after = (await viewer.get(diagnosis("hung"))).json()
        assert after["conclusion"] == "healthy" and after["findings"] == [], after

        settle(stack, 300)  # hung-again: no progress line for 900 s -> the rule restarts it
        restarted = (await viewer.get(diagnosis("hung-again"))).json()
        rule = checks(restarted)["hang_rule"]
        assert rule["status"] == "warn" and "JobHangingDetection" in rule["detail"], restarted
        assert "HANGING" in rule["detail"] and "1 of 1 restarts spent" in rule["detail"]
        assert "JobRestarting at 20" in proof(rule)  # the event, with its time
        settle(stack, 1000)  # hangs again, no restart left: the operator fails it
        failed = (await viewer.get(diagnosis("hung-again"))).json()
        rule = checks(failed)["hang_rule"]
        assert failed["status"] == "fail" and rule["status"] == "fail", failed
        assert "JobHangingDetection" in failed["conclusion"] and "budget" in failed["conclusion"]
        assert "JobFailed at 20" in proof(rule) and "restarts 1 of 1 spent" in proof(rule)
        assert failed["next"]["tool"] == "job_logs" and not failed["next"]["mutates"]
    await cleanup(stack, "hung", "hung-again")


async def test_a_cuda_oom_and_an_nccl_timeout_are_quoted_from_the_workers_logs(
        cluster: tuple[Stack, str], tmp_path: Path) -> None:  # noqa: F811
    stack, group = cluster
    async with stack.client("viewer") as viewer, stack.client("operator") as operator:
        await apply_job(stack, operator, tmp_path, "oom", group, 1, 0, crash="cuda_oom",
                        duration_seconds="30", exit_code="1")
        settle(stack, 10)
        settle(stack, 40)
        oom = (await viewer.get(diagnosis("oom"))).json()
        found = checks(oom)["cuda_oom"]
        (pod,) = pods(stack, HPJob="oom").values()
        where = f"pod {pod['metadata']['name']} on node {pod['spec']['nodeName']}"
        assert oom["status"] == "fail" and "GPU ran out of memory" in oom["conclusion"], oom
        assert "pod log" in sources(oom)
        assert f"{where}: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate" in \
            proof(found)
        assert "oom_killed" not in checks(oom)  # GPU memory, not the container's
        await cleanup(stack, "oom")

        await apply_job(stack, operator, tmp_path, "timeout", group, 2, 0, crash="nccl_timeout",
                        hang_after_seconds="20", duration_seconds="640", exit_code="134")
        settle(stack, 10)
        settle(stack, 660)
        verdict = (await viewer.get(diagnosis("timeout"))).json()
        found = checks(verdict)["nccl_timeout"]
        assert "NCCL collective timed out" in verdict["conclusion"], verdict
        nodes = sorted(p["spec"]["nodeName"] for p in pods(stack, HPJob="timeout").values())
        for p in pods(stack, HPJob="timeout").values():
            assert f"pod {p['metadata']['name']} on node {p['spec']['nodeName']}" in proof(found)
        assert "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=" in proof(found)
        assert "Timeout(ms)=600000) ran for" in proof(found)
        assert "xid" not in checks(verdict)
        step = verdict["next"]
        assert step["tool"] == "diagnose_nccl" and step["mutates"] is True
        assert step["arguments"] == {"cluster": CLUSTER, "nodes": nodes}
        before = len(stack.ledger())
        assert (await perform(viewer, step)).status_code == 403
        assert len(stack.ledger()) == before
        test = await finish(operator, (await perform(operator, step)).json())
        assert test["status"] == "succeeded", test  # the nodes' links measured, once idle
        result = (await operator.get(f"/api/v1/clusters/{CLUSTER}/diagnostics/nccl/"
                                     f"{test['id']}")).json()
        assert result["nodes"] == [n.removeprefix("hyperpod-") for n in nodes], result
        assert result["verdict"]["conclusion"] == "healthy", result["verdict"]
    await cleanup(stack, "timeout")


async def test_an_xid_names_the_node_and_its_ladder_repairs_it(
        cluster: tuple[Stack, str], tmp_path: Path) -> None:  # noqa: F811
    stack, group = cluster
    async with stack.client("viewer") as viewer, stack.client("operator") as operator:
        await apply_job(stack, operator, tmp_path, "xid", group, 1, 0, crash="xid:79",
                        duration_seconds="30", exit_code="1")
        settle(stack, 10)
        settle(stack, 40)
        (pod,) = pods(stack, HPJob="xid").values()
        node = pod["spec"]["nodeName"]
        iid = node.removeprefix("hyperpod-")
        # the health agent sees the same Xid in the kernel log and HyperPod flags the node
        stack.fault(kind="node_unhealthy", cluster=CLUSTER, instance_id=iid, action="reboot",
                    reason=XID)
        settle(stack, 5)
        verdict = (await viewer.get(diagnosis("xid"))).json()
        found = checks(verdict)["xid"]
        assert "Xid 79 (GPU has fallen off the bus)" in verdict["conclusion"], verdict
        assert node in found["detail"]
        assert f"on node {node}: [" in proof(found) and \
            "NVRM: Xid (PCI:0000:10:1c): 79, pid=" in proof(found)
        assert "nccl_timeout" not in checks(verdict)
        assert verdict["next"] == {"tool": "diagnose_node", "arguments": {
            "cluster": CLUSTER, "node": iid}, "cost": verdict["next"]["cost"], "mutates": False}
        node_verdict = (await perform(viewer, verdict["next"])).json()
        assert node_verdict["next"]["tool"] == "node_reboot", node_verdict
        assert any("CloudWatch Logs" in n and f"/aws/sagemaker/Clusters/{CLUSTER}/" in n
                   for n in node_verdict["notes"]), node_verdict["notes"]  # not read: said
        rebooted = await finish(operator, (await perform(operator, node_verdict["next"])).json())
        assert rebooted["status"] == "succeeded", rebooted
        settle(stack, 10)
        assert (await perform(viewer, verdict["next"])).json()["conclusion"] == "healthy"
    await cleanup(stack, "xid")
