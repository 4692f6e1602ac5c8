"""EKS add-ons install what they really install (kubectl sees namespaces, service accounts, CRDs,
Deployments and DaemonSets), remove it when deleted, and the Pod Identity webhook injects
credentials only into pods admitted after the association exists."""

from __future__ import annotations

import json
from typing import Any

from podplane_sandbox.aws.iam_rules import LAG_SECONDS
from tests.sandbox_aws.iam_setup import make_role
from tests.stack import Stack

ROLE = "arn:aws:iam::123456789012:role/podplane-test"
OPERATOR = "amazon-sagemaker-hyperpod-training-operator"


def eks_cluster(stack: Stack, name: str = "eks1") -> Any:
    """An EKS cluster whose role exists and trusts EKS (and Pod Identity), past IAM's lag."""
    if not any(r["RoleName"] == "podplane-test" for r in stack.aws("iam").list_roles()["Roles"]):
        make_role(stack.aws, "podplane-test")
        stack.advance(LAG_SECONDS)
    eks = stack.aws("eks")
    eks.create_cluster(name=name, roleArn=ROLE,
                       accessConfig={"authenticationMode": "API_AND_CONFIG_MAP"},
                       resourcesVpcConfig={"subnetIds": ["subnet-0123456789abcdef0"]})
    stack.advance(700)
    return eks


def settle(stack: Stack, seconds: float = 10) -> None:
    stack.advance(seconds)
    stack.sandbox.call(stack.sandbox.kube.settle())


def kubectl_json(stack: Stack, *args: str) -> dict[str, Any]:
    return dict(json.loads(stack.kubectl(*args, "-o", "json")))


def names(stack: Stack, *args: str) -> set[str]:
    return {i["metadata"]["name"] for i in kubectl_json(stack, "get", *args)["items"]}


async def test_addons_install_their_objects_and_remove_them(stack: Stack) -> None:
    eks = eks_cluster(stack)
    for addon in ("vpc-cni", "kube-proxy", "eks-pod-identity-agent", "coredns", "cert-manager",
                  "aws-mountpoint-s3-csi-driver", OPERATOR):
        eks.create_addon(clusterName="eks1", addonName=addon)
    settle(stack)
    assert {"aws-node", "kube-proxy", "eks-pod-identity-agent", "s3-csi-node"} <= names(
        stack, "daemonsets", "-n", "kube-system")
    assert {"coredns", "s3-csi-controller"} <= names(stack, "deployments", "-n", "kube-system")
    assert names(stack, "deployments", "-n", "cert-manager") == {
        "cert-manager", "cert-manager-cainjector", "cert-manager-webhook"}
    assert names(stack, "deployments", "-n", "aws-hyperpod") >= {
        "hp-training-operator-controller-manager"}
    assert "hp-training-operator-controller-manager" in names(
        stack, "serviceaccounts", "-n", "aws-hyperpod")
    assert "s3-csi-driver-sa" in names(stack, "serviceaccounts", "-n", "kube-system")
    crds = names(stack, "crds")
    assert {"hyperpodpytorchjobs.sagemaker.amazonaws.com", "certificates.cert-manager.io",
            "eniconfigs.crd.k8s.amazonaws.com"} <= crds
    assert "s3.csi.aws.com" in names(stack, "csidrivers")
    # no nodes: the add-ons' Deployment pods wait, as on an empty EKS cluster
    pods = kubectl_json(stack, "get", "pods", "-n", "kube-system",
                        "-l", "app.kubernetes.io/name=coredns")["items"]
    assert len(pods) == 2 and {p["status"]["phase"] for p in pods} == {"Pending"}

    eks.delete_addon(clusterName="eks1", addonName=OPERATOR)
    settle(stack, 120)
    assert "hyperpodpytorchjobs.sagemaker.amazonaws.com" not in names(stack, "crds")
    assert "hp-training-operator-controller-manager" not in names(
        stack, "deployments", "-n", "aws-hyperpod")


async def test_hyperpod_pytorchjob_crd_validates_like_the_sdk_model(stack: Stack) -> None:
    eks = eks_cluster(stack)
    eks.create_addon(clusterName="eks1", addonName=OPERATOR)
    settle(stack)
    job = {"apiVersion": "sagemaker.amazonaws.com/v1", "kind": "HyperPodPyTorchJob",
           "metadata": {"name": "demo", "namespace": "default"},
           "spec": {"nprocPerNode": "auto", "replicaSpecs": [{"name": "pod", "replicas": 1,
                    "template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}}],
                    "runPolicy": {"restartPolicy": {"maxFullJobRestarts": 1}}}}
    path = stack.sandbox.box.folder / "job.json"
    path.write_text(json.dumps(job))
    env_err = None
    try:
        stack.kubectl("create", "-f", str(path))
    except AssertionError as err:
        env_err = str(err)
    assert env_err is not None and "evalPeriodSeconds" in env_err  # required in restartPolicy
    job["spec"]["runPolicy"]["restartPolicy"]["evalPeriodSeconds"] = 3600
    path.write_text(json.dumps(job))
    stack.kubectl("create", "-f", str(path))
    assert names(stack, "hyperpodpytorchjobs", "-n", "default") == {"demo"}


def _pod(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "kube-system"},
            "spec": {"serviceAccountName": "s3-csi-driver-sa",
                     "containers": [{"name": "c", "image": "busybox:1.36"}]}}


async def test_pod_identity_reaches_only_pods_admitted_after_the_association(
        stack: Stack) -> None:
    eks = eks_cluster(stack)
    stack.kubectl("create", "serviceaccount", "s3-csi-driver-sa", "-n", "kube-system")
    path = stack.sandbox.box.folder / "pod.json"
    path.write_text(json.dumps(_pod("before")))
    stack.kubectl("create", "-f", str(path))
    eks.create_pod_identity_association(clusterName="eks1", namespace="kube-system",
                                        serviceAccount="s3-csi-driver-sa", roleArn=ROLE)
    path.write_text(json.dumps(_pod("after")))
    stack.kubectl("create", "-f", str(path))

    def env(name: str) -> dict[str, str]:
        pod = kubectl_json(stack, "get", "pod", name, "-n", "kube-system")
        return {e["name"]: e.get("value", "") for e in pod["spec"]["containers"][0].get("env", [])}

    assert "AWS_CONTAINER_CREDENTIALS_FULL_URI" not in env("before")
    after = env("after")
    assert after["AWS_CONTAINER_CREDENTIALS_FULL_URI"] == "http://169.254.170.23/v1/credentials"
    assert after["AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"].endswith("/eks-pod-identity-token")
    volumes = kubectl_json(stack, "get", "pod", "after", "-n", "kube-system")["spec"]["volumes"]
    token = next(v for v in volumes if v["name"] == "eks-pod-identity-token")
    assert token["projected"]["sources"][0]["serviceAccountToken"]["audience"] == \
        "pods.eks.amazonaws.com"
