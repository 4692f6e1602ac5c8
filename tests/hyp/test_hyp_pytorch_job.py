"""The `hyp-pytorch-job` cycle of the official HyperPod CLI on a podplane-created cluster:
create, list, describe, list-pods, get-logs, delete.

Needs the training operator to install what it really installs (the HyperPodPyTorchJob CRD
and its controller, in `aws-hyperpod`): the EKS add-on side of that is branch `addons`. Until
it lands, `hyp create` answers that the training operator is missing, as it would on AWS.
"""

from __future__ import annotations

import re

from tests.clusters.helpers import BODY
from tests.hyp.conftest import Hyp
from tests.hyp.test_hyp_cluster import create_with_podplane
from tests.stack import Stack

JOB = "hyp-demo"
IMAGE = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"


async def test_hyp_pytorch_job_create_list_describe_pods_logs_delete(
        stack: Stack, hyp: Hyp) -> None:
    await create_with_podplane(stack)
    hyp.run("set-cluster-context", "--cluster-name", BODY["name"])
    hyp.run("create", "hyp-pytorch-job", "--job-name", JOB, "--image", IMAGE,
            "--instance-type", BODY["instance_type"], "--replica-count", "1")
    stack.advance(300)
    stack.sandbox.call(stack.sandbox.kube.settle())

    assert JOB in hyp.run("list", "hyp-pytorch-job").stdout
    assert JOB in hyp.run("describe", "hyp-pytorch-job", "--job-name", JOB).stdout
    pods = re.findall(rf"\b{JOB}-[\w-]+", hyp.run("list-pods", "hyp-pytorch-job",
                                                  "--job-name", JOB).stdout)
    assert pods, "the job has no pods"
    hyp.run("get-logs", "hyp-pytorch-job", "--job-name", JOB, "--pod-name", pods[0])

    hyp.run("delete", "hyp-pytorch-job", "--job-name", JOB)
    stack.sandbox.call(stack.sandbox.kube.settle())
    assert JOB not in hyp.run("list", "hyp-pytorch-job").stdout
