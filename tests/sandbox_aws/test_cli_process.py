"""Outside views: the PyPI AWS CLI against the sandbox, and `podplane sandbox` as a process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import boto3
import httpx
import pytest

from podplane.cloud.sandbox_secret import control_headers, sandbox_secret
from tests.sandbox_aws.conftest import Box, group, hyperpod_cluster, network
from tests.sandbox_aws.iam_setup import prepare
from tests.served import SandboxProcess, free_port

AWS = str(Path(sys.executable).parent / "aws")
SRC = str(Path(__file__).resolve().parents[2] / "src")


def cli_env(tmp: Path) -> dict[str, str]:
    return {**os.environ, "HOME": str(tmp), "AWS_ACCESS_KEY_ID": "test",
            "AWS_SECRET_ACCESS_KEY": "test", "AWS_DEFAULT_REGION": "us-west-2",
            "AWS_CONFIG_FILE": str(tmp / "none"), "AWS_SHARED_CREDENTIALS_FILE": str(tmp / "none"),
            "PYTHONPATH": SRC}


@pytest.mark.slow
def test_pypi_aws_cli_works_unchanged(box: Box, tmp_path: Path) -> None:
    subnet, sg = network(box)
    box.client("s3").create_bucket(Bucket="sagemaker-scripts",
                                   CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    hyperpod_cluster(box, "hp1", [group("ctrl", "ml.m5.xlarge", 1),
                                  group("gpu", "ml.g5.8xlarge", 2)], subnet, sg)
    box.advance(1300)
    commands = {
        "sts": ["sts", "get-caller-identity"],
        "vpcs": ["ec2", "describe-vpcs"],
        "eks-list": ["eks", "list-clusters"],
        "eks-describe": ["eks", "describe-cluster", "--name", "eks1"],
        "sm-list": ["sagemaker", "list-clusters"],
        "sm-describe": ["sagemaker", "describe-cluster", "--cluster-name", "hp1"],
        "sm-nodes": ["sagemaker", "list-cluster-nodes", "--cluster-name", "hp1"],
        "s3": ["s3", "ls"],
        "kubeconfig": ["eks", "update-kubeconfig", "--name", "eks1", "--kubeconfig",
                       str(tmp_path / "kubeconfig")],
    }
    procs = {k: subprocess.Popen([AWS, "--endpoint-url", box.url, *args, "--output", "json"]
                                 if k not in ("s3", "kubeconfig")
                                 else [AWS, "--endpoint-url", box.url, *args],
                                 env=cli_env(tmp_path), stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
             for k, args in commands.items()}
    out = {}
    for key, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, (key, stderr)
        out[key] = stdout
    assert json.loads(out["sts"])["Account"] == "123456789012"
    assert subnet and json.loads(out["vpcs"])["Vpcs"]
    assert json.loads(out["eks-list"])["clusters"] == ["eks1"]
    assert json.loads(out["eks-describe"])["cluster"]["status"] == "ACTIVE"
    assert json.loads(out["sm-list"])["ClusterSummaries"][0]["ClusterName"] == "hp1"
    assert json.loads(out["sm-describe"])["ClusterStatus"] == "InService"
    node_ids = [n["InstanceId"] for n in json.loads(out["sm-nodes"])["ClusterNodeSummaries"]]
    assert len(node_ids) == 3 and all(i.startswith("i-") for i in node_ids)
    assert "sagemaker-scripts" in out["s3"]
    assert "server: https://127.0.0.1:16443" in (tmp_path / "kubeconfig").read_text()


def secret_of(home: Path) -> dict[str, str]:
    """The control API's header, from the secret the sandbox wrote to its env file."""
    return control_headers(sandbox_secret(home / "sandbox"))


def start_process(home: Path, port: int) -> SandboxProcess:
    box = SandboxProcess(home, aws_port=port, env=cli_env(home))
    box.start()
    return box


@pytest.mark.slow
def test_sandbox_process_writes_env_and_keeps_state_across_restart(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = start_process(tmp_path, port)
    try:
        env = (tmp_path / "sandbox" / "env").read_text()
        assert f"export AWS_ENDPOINT_URL={url}" in env
        assert f"export KUBECONFIG={tmp_path / 'sandbox' / 'kubeconfig'}" in env
        prepare(lambda service: boto3.client(
            service, endpoint_url=url, region_name="us-west-2", aws_access_key_id="test",
            aws_secret_access_key="test"), lambda seconds: httpx.post(
            f"{url}/_sandbox/clock/advance", json={"seconds": seconds},
            headers=secret_of(tmp_path)), "podplane-test")
        # no VpcConfig: HyperPod refuses subnets and security groups EC2 does not have
        body = {"ClusterName": "hp1", "InstanceGroups": [group("w", "ml.m5.xlarge", 1)]}
        r = httpx.post(url, json=body, headers={"X-Amz-Target": "SageMaker.CreateCluster",
                                                "Content-Type": "application/x-amz-json-1.1"})
        assert r.status_code == 200, r.text
        httpx.post(f"{url}/_sandbox/clock/advance", json={"seconds": 1234},
                   headers=secret_of(tmp_path))
    finally:
        assert proc.stop() == 0  # SIGTERM: it saves its state and exits cleanly
    proc = start_process(tmp_path, port)
    try:
        assert httpx.get(f"{url}/_sandbox/clock",
                         headers=secret_of(tmp_path)).json()["now"] >= 1_780_000_000 + 1234
        r = httpx.post(url, json={"ClusterName": "hp1"},
                       headers={"X-Amz-Target": "SageMaker.DescribeCluster",
                                "Content-Type": "application/x-amz-json-1.1"})
        assert r.json()["ClusterStatus"] == "InService"
    finally:
        proc.stop()


@pytest.mark.slow
def test_up_starts_the_sandbox_as_a_child_and_points_aws_at_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from podplane import server
    from podplane.settings import Settings

    for key in ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                "AWS_DEFAULT_REGION"):
        monkeypatch.setenv(key, "")  # recorded, so what _start_sandbox sets is undone after
        monkeypatch.delenv(key)
    url = f"http://127.0.0.1:{free_port()}"
    settings = Settings(home=tmp_path, aws_endpoint_url=url)
    child = server._start_sandbox(settings, kube_port=free_port())
    try:
        assert child is not None and child.poll() is None
        assert os.environ["AWS_ENDPOINT_URL"] == url == settings.aws_endpoint_url
        assert httpx.get(f"{url}/_sandbox/clock",
                         headers=secret_of(tmp_path)).status_code == 200
        assert server._start_sandbox(settings) is None  # one already answers: reuse it
    finally:
        assert child is not None
        child.terminate()
        assert child.wait(timeout=30) == 0
    assert (tmp_path / "sandbox" / "aws-state.json").exists()
