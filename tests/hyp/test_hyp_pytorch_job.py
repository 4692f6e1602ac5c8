"""The `hyp-pytorch-job` commands of the official HyperPod CLI on a podplane-created cluster:
create (which checks that the training operator add-on installed its CRD and controller, as on
AWS), list, describe and delete. `list-pods` and `get-logs` need the operator's behaviour (pods
per replica, logs), which the sandbox does not emulate yet: that is the training issue's
sandbox work, so they are not exercised here.
"""

from __future__ import annotations

from tests.clusters.helpers import BODY
from tests.hyp.conftest import Hyp
from tests.hyp.test_hyp_cluster import create_with_podplane
from tests.stack import Stack

JOB = "hyp-demo"
IMAGE = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"


async def test_hyp_pytorch_job_create_list_describe_delete(
        stack: Stack, hyp: Hyp) -> None:
    await create_with_podplane(stack)
    hyp.run("set-cluster-context", "--cluster-name", BODY["name"])
    hyp.run("create", "hyp-pytorch-job", "--job-name", JOB, "--image", IMAGE,
            "--instance-type", BODY["instance_type"], "--replica-count", "1")
    stack.advance(300)
    stack.sandbox.call(stack.sandbox.kube.settle())

    assert JOB in hyp.run("list", "hyp-pytorch-job").stdout
    assert JOB in hyp.run("describe", "hyp-pytorch-job", "--job-name", JOB).stdout

    hyp.run("delete", "hyp-pytorch-job", "--job-name", JOB)
    stack.sandbox.call(stack.sandbox.kube.settle())
    assert JOB not in hyp.run("list", "hyp-pytorch-job").stdout
