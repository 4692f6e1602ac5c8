"""Our KubePort adapter (lightkube, async) configured the EKS way: DescribeCluster endpoint +
CA, and a token signed in-process with botocore."""

from __future__ import annotations

import asyncio
import base64

import pytest

from podplane.cloud.kube.client import LightkubeKube
from podplane.cloud.kube.config import EksAccess
from podplane.cloud.kube.eks_token import static_session
from podplane.domain.errors import InvalidInput, NotFound
from tests.sandbox_kube.conftest import Sandbox

DEPLOY = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "lk", "namespace": "lightkube", "labels": {"app": "lk"}},
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "lk"}},
        "template": {
            "metadata": {"labels": {"app": "lk"}},
            "spec": {"containers": [{"name": "srv", "image": "vllm/vllm-openai:v0.9.0"}]},
        },
    },
}


def _adapter(sandbox: Sandbox) -> LightkubeKube:
    described = {
        "cluster": {
            "name": "eks-test",
            "endpoint": sandbox.api.endpoint,
            "certificateAuthority": {"data": base64.b64encode(sandbox.api.ca_pem).decode()},
        }
    }
    access = EksAccess.from_describe_cluster(
        described, "us-west-2", session=static_session("AKIATESTTESTTESTTEST", "secret")
    )
    return LightkubeKube(access)


async def test_apply_get_list_patch_delete(sandbox: Sandbox) -> None:
    kube = _adapter(sandbox)
    try:
        await kube.apply(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "lightkube"}}
        )
        created = await kube.apply(DEPLOY)
        assert created["metadata"]["generation"] == 1
        await asyncio.to_thread(sandbox.advance, 5)
        dep = await kube.get("apps/v1", "Deployment", "lk", "lightkube")
        assert dep is not None and dep["status"]["readyReplicas"] == 1
        pods = await kube.list("v1", "Pod", namespace="lightkube", labels={"app": "lk"})
        assert len(pods) == 1 and pods[0]["status"]["phase"] == "Running"
        nodes = await kube.list("v1", "Node")
        assert len(nodes) == 4
        patched = await kube.patch(
            "apps/v1", "Deployment", "lk", {"spec": {"replicas": 2}}, namespace="lightkube"
        )
        assert patched["spec"]["replicas"] == 2
        lines = [line async for line in kube.logs(pods[0]["metadata"]["name"], "lightkube")]
        assert lines[0] == "INFO Starting inference server"
        await kube.delete("apps/v1", "Deployment", "lk", namespace="lightkube")
        assert await kube.get("apps/v1", "Deployment", "lk", "lightkube") is None
        with pytest.raises(NotFound):
            await kube.patch("apps/v1", "Deployment", "lk", {}, namespace="lightkube")
    finally:
        await kube.close()


async def test_watch_and_custom_resources(sandbox: Sandbox) -> None:
    kube = _adapter(sandbox)
    try:
        crd = {
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {
                "group": "example.com",
                "scope": "Namespaced",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                "versions": [
                    {
                        "name": "v1",
                        "served": True,
                        "storage": True,
                        "schema": {
                            "openAPIV3Schema": {
                                "type": "object",
                                "properties": {
                                    "spec": {
                                        "type": "object",
                                        "required": ["size"],
                                        "properties": {
                                            "size": {"type": "integer", "minimum": 1},
                                            "color": {"type": "string", "default": "blue"},
                                        },
                                    }
                                },
                            }
                        },
                    }
                ],
            },
        }
        await kube.apply(crd)
        rv = await kube.list("v1", "Namespace")  # any call; the watch below starts from now
        assert rv
        widget = {
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": "w1", "namespace": "default"},
            "spec": {"size": 3},
        }
        stored = await kube.apply(widget)
        assert stored["spec"] == {"size": 3, "color": "blue"}  # schema default applied
        with pytest.raises(InvalidInput) as err:
            await kube.apply(
                {**widget, "metadata": {"name": "w2", "namespace": "default"}, "spec": {"size": 0}}
            )
        assert err.value.extra["causes"][0]["field"] == "spec.size"
        events = []
        async for event in kube.watch("example.com/v1", "Widget", namespace="default"):
            events.append((event.type, event.object["metadata"]["name"]))
            if len(events) == 1:
                await kube.delete("example.com/v1", "Widget", "w1", namespace="default")
            if len(events) == 2:
                break
        assert events == [("ADDED", "w1"), ("DELETED", "w1")]
    finally:
        await kube.close()
