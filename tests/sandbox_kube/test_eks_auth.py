"""Kubernetes per EKS cluster, as EKS serves it: each cluster its own endpoint, CA, store and
nodes; EKS tokens verified and mapped to principals; access entries and access policies decide
(401 without an entry, 403 outside its policies). Everything is observed the way a client sees
it: DescribeCluster, the HTTP status and Status body, kubectl's output."""

from __future__ import annotations

import base64
import json
import os
import ssl
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import httpx
import pytest
import yaml
from botocore.config import Config

from podplane.cloud.kube.eks_token import eks_token, static_session
from tests.sandbox_kube import real_cloud
from tests.stack import KUBECTL, SandboxThread

ACCOUNT = "123456789012"
POLICY = "arn:aws:eks::aws:cluster-access-policy/"


class Cloud:
    def __init__(self, home: Path) -> None:
        self.thread = SandboxThread(home)
        self.url = self.thread.box.aws_url

    def client(self, service: str, key: str = "test", secret: str = "test",
               token: str | None = None) -> Any:
        return boto3.client(service, endpoint_url=self.url, region_name="us-west-2",
                            aws_access_key_id=key, aws_secret_access_key=secret,
                            aws_session_token=token,
                            config=Config(retries={"total_max_attempts": 1}))

    def advance(self, seconds: float) -> None:
        httpx.post(f"{self.url}/_sandbox/clock/advance", json={"seconds": seconds},
                   headers=self.thread.box.control_headers)

    def role(self, name: str, service: str, *policies: str) -> str:
        return real_cloud.role(self.client, name, service, *policies)

    def eks_cluster(self, name: str, **access: Any) -> dict[str, Any]:
        real_cloud.create_eks(self.client, name, self.advance, **access)
        self.advance(700)
        return dict(self.client("eks").describe_cluster(name=name)["cluster"])

    def user(self, name: str) -> tuple[str, str, str]:
        """An IAM user with an access key -> (arn, key, secret)."""
        iam = self.client("iam")
        arn = iam.create_user(UserName=name)["User"]["Arn"]
        key = iam.create_access_key(UserName=name)["AccessKey"]
        return str(arn), key["AccessKeyId"], key["SecretAccessKey"]

    def stop(self) -> None:
        if self.thread.thread.is_alive():
            self.thread.stop()


@pytest.fixture
def cloud(tmp_path: Path) -> Iterator[Cloud]:
    c = Cloud(tmp_path / "cloud")
    yield c
    c.stop()


def kube(cluster: dict[str, Any], key: str = "test", secret: str = "test",
         session_token: str | None = None, token_for: str | None = None) -> httpx.Client:
    """An HTTP client for a cluster, trusting only the CA DescribeCluster returned."""
    ca = base64.b64decode(cluster["certificateAuthority"]["data"]).decode()
    session = static_session(key, secret)
    if session_token:
        session.set_credentials(key, secret, session_token)
    token = eks_token(token_for or cluster["name"], "us-west-2", session)
    return httpx.Client(base_url=cluster["endpoint"], verify=ssl.create_default_context(
        cadata=ca), headers={"Authorization": f"Bearer {token}"}, timeout=30)


def test_each_eks_cluster_has_its_own_endpoint_and_ca(cloud: Cloud) -> None:
    a, b = cloud.eks_cluster("alpha"), cloud.eks_cluster("beta")
    assert a["endpoint"] != b["endpoint"]
    assert a["certificateAuthority"]["data"] != b["certificateAuthority"]["data"]
    with kube(a) as client:
        assert client.get("/api/v1/namespaces").status_code == 200
    wrong_ca = {**b, "certificateAuthority": a["certificateAuthority"]}
    with pytest.raises(httpx.ConnectError), kube(wrong_ca) as client:
        client.get("/api/v1/namespaces")  # B's server is not signed by A's CA
    with kube(a) as client:  # one store per cluster
        client.post("/api/v1/namespaces", json={"metadata": {"name": "only-in-alpha"}})
    with kube(b) as client:
        assert client.get("/api/v1/namespaces/only-in-alpha").status_code == 404


def test_kubectl_with_a_clusters_context_sees_only_its_nodes(cloud: Cloud) -> None:
    cloud.eks_cluster("alpha")
    cloud.eks_cluster("beta")
    _hyperpod(cloud, "hp-alpha", "alpha", count=2)
    _hyperpod(cloud, "hp-beta", "beta", count=1)
    cloud.advance(1200)
    cloud.thread.box.world.tick()
    cloud.thread.call(cloud.thread.kube.settle())
    env = {**os.environ, "KUBECONFIG": str(cloud.thread.kube.kubeconfig_path)}
    contexts = subprocess.run([KUBECTL, "config", "get-contexts", "-o", "name"], env=env,
                              capture_output=True, text=True, check=True).stdout.split()
    assert sorted(contexts) == ["alpha", "beta"]
    for context, count in (("alpha", 2), ("beta", 1)):
        out = subprocess.run([KUBECTL, "--context", context, "get", "nodes", "-o", "json"],
                             env=env, capture_output=True, text=True, check=True).stdout
        nodes = json.loads(out)["items"]
        assert len(nodes) == count, (context, [n["metadata"]["name"] for n in nodes])


def test_a_principal_without_an_access_entry_gets_401(cloud: Cloud) -> None:
    a = cloud.eks_cluster("alpha")
    _, key, secret = cloud.user("dana")
    with kube(a, key, secret) as client:
        r = client.get("/api/v1/pods")
    assert r.status_code == 401 and r.json()["reason"] == "Unauthorized"
    config = _kubeconfig(a, key, secret, cloud.thread.box.folder / "dana.yaml")
    done = subprocess.run([KUBECTL, "--kubeconfig", str(config), "get", "pods"],
                          capture_output=True, text=True)
    # kubectl's wording for a 401 differs between its versions; both mean Unauthorized
    assert ("the server has asked for the client to provide credentials" in done.stderr
            or "You must be logged in to the server (Unauthorized)" in done.stderr)


def test_view_policy_reads_but_cannot_create(cloud: Cloud) -> None:
    a = cloud.eks_cluster("alpha")
    arn, key, secret = cloud.user("viewer")
    eks = cloud.client("eks")
    eks.create_access_entry(clusterName="alpha", principalArn=arn)
    eks.associate_access_policy(clusterName="alpha", principalArn=arn,
                                policyArn=POLICY + "AmazonEKSViewPolicy",
                                accessScope={"type": "namespace", "namespaces": ["default"]})
    with kube(a, key, secret) as client:
        assert client.get("/api/v1/namespaces/default/pods").status_code == 200
        r = client.post("/api/v1/namespaces/default/configmaps",
                        json={"metadata": {"name": "x"}, "data": {}})
        assert r.status_code == 403 and r.json()["reason"] == "Forbidden"
        assert r.json()["message"] == (
            f'configmaps is forbidden: User "{arn}" cannot create resource "configmaps" in '
            'API group "" in the namespace "default"')
        assert client.get("/api/v1/namespaces/kube-system/pods").status_code == 403
        assert client.get("/api/v1/namespaces/default/secrets").status_code == 403


def test_kubernetes_groups_count_through_rbac_bindings(cloud: Cloud) -> None:
    a = cloud.eks_cluster("alpha")
    arn, key, secret = cloud.user("reader")
    cloud.client("eks").create_access_entry(clusterName="alpha", principalArn=arn,
                                            kubernetesGroups=["pod-readers"])
    rbac = "/apis/rbac.authorization.k8s.io/v1"
    with kube(a) as admin:
        admin.post(f"{rbac}/clusterroles", json={
            "metadata": {"name": "pod-reader"},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]})
        admin.post(f"{rbac}/clusterrolebindings", json={
            "metadata": {"name": "pod-readers"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                        "name": "pod-reader"},
            "subjects": [{"kind": "Group", "name": "pod-readers",
                          "apiGroup": "rbac.authorization.k8s.io"}]})
    with kube(a, key, secret) as client:
        assert client.get("/api/v1/namespaces/default/pods").status_code == 200
        assert client.get("/api/v1/namespaces/default/configmaps").status_code == 403


def test_tokens_for_another_cluster_or_with_a_bad_signature_get_401(cloud: Cloud) -> None:
    a = cloud.eks_cluster("alpha")
    cloud.eks_cluster("beta")
    with kube(a, token_for="beta") as client:  # the admin's token, made for beta
        assert client.get("/api/v1/pods").status_code == 401
    with kube(a, "test", "not-the-secret") as client:
        assert client.get("/api/v1/pods").status_code == 401
    with kube(a) as client:
        client.headers["Authorization"] = "Bearer k8s-aws-v1.bm90LWEtdXJs"
        assert client.get("/api/v1/pods").status_code == 401


def test_a_role_session_is_matched_by_its_role_arn(cloud: Cloud) -> None:
    a = cloud.eks_cluster("alpha")
    role = cloud.role("operators", "ec2.amazonaws.com")
    creds = cloud.client("sts").assume_role(RoleArn=role, RoleSessionName="ops-1")["Credentials"]
    who = cloud.client("sts", creds["AccessKeyId"], creds["SecretAccessKey"],
                       creds["SessionToken"]).get_caller_identity()
    assert who["Arn"] == f"arn:aws:sts::{ACCOUNT}:assumed-role/operators/ops-1"
    session = (creds["AccessKeyId"], creds["SecretAccessKey"], creds["SessionToken"])
    with kube(a, *session[:2], session_token=session[2]) as client:
        assert client.get("/api/v1/nodes").status_code == 401
    eks = cloud.client("eks")
    eks.create_access_entry(clusterName="alpha", principalArn=role)
    eks.associate_access_policy(clusterName="alpha", principalArn=role,
                                policyArn=POLICY + "AmazonEKSClusterAdminPolicy",
                                accessScope={"type": "cluster"})
    with kube(a, *session[:2], session_token=session[2]) as client:
        assert client.get("/api/v1/nodes").status_code == 200


def test_sts_get_caller_identity_answers_like_aws(cloud: Cloud) -> None:
    assert cloud.client("sts").get_caller_identity()["Arn"] == \
        f"arn:aws:iam::{ACCOUNT}:user/sandbox-admin"
    arn, key, secret = cloud.user("erin")
    assert cloud.client("sts", key, secret).get_caller_identity()["Arn"] == arn
    with pytest.raises(Exception, match="InvalidClientTokenId"):
        cloud.client("sts", "AKIANOBODY", "x").get_caller_identity()


def test_the_creator_is_admin_only_when_bootstrapped(cloud: Cloud) -> None:
    a = cloud.eks_cluster("alpha")
    b = cloud.eks_cluster("beta", bootstrapClusterCreatorAdminPermissions=False)
    entries = cloud.client("eks").list_access_entries(clusterName="alpha")["accessEntries"]
    assert entries == [f"arn:aws:iam::{ACCOUNT}:user/sandbox-admin"]
    assert cloud.client("eks").list_access_entries(clusterName="beta")["accessEntries"] == []
    with kube(a) as client:
        assert client.get("/api/v1/nodes").status_code == 200
    with kube(b) as client:
        assert client.get("/api/v1/nodes").status_code == 401


def test_hyperpod_gives_its_execution_role_a_hyperpod_linux_entry(cloud: Cloud) -> None:
    cloud.eks_cluster("alpha")
    role = _hyperpod(cloud, "hp-alpha", "alpha", count=1)
    entry = cloud.client("eks").describe_access_entry(clusterName="alpha",
                                                      principalArn=role)["accessEntry"]
    assert entry["type"] == "HYPERPOD_LINUX"


def test_a_restart_keeps_each_clusters_port_ca_and_objects(cloud: Cloud, tmp_path: Path) -> None:
    a = cloud.eks_cluster("alpha")
    with kube(a) as client:
        client.post("/api/v1/namespaces", json={"metadata": {"name": "kept"}})
    cloud.stop()
    again = Cloud(tmp_path / "cloud")
    try:
        after = again.client("eks").describe_cluster(name="alpha")["cluster"]
        assert after["certificateAuthority"] == a["certificateAuthority"]
        assert after["endpoint"] == a["endpoint"]
        with kube(after) as client:
            assert client.get("/api/v1/namespaces/kept").status_code == 200
    finally:
        again.stop()


def _hyperpod(cloud: Cloud, name: str, eks: str, count: int) -> str:
    return real_cloud.create_hyperpod(cloud.client, name, eks, "ml.m5.xlarge", count,
                                     cloud.advance)


def _kubeconfig(cluster: dict[str, Any], key: str, secret: str, path: Path) -> Path:
    token = eks_token(cluster["name"], "us-west-2", static_session(key, secret))
    config = {"apiVersion": "v1", "kind": "Config", "current-context": "c",
              "clusters": [{"name": "c", "cluster": {
                  "server": cluster["endpoint"],
                  "certificate-authority-data": cluster["certificateAuthority"]["data"]}}],
              "users": [{"name": "u", "user": {"token": token}}],
              "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}
    path.write_text(yaml.safe_dump(config))
    return path
