"""One podplane-created cluster per module (the jobs tests' fixture: two one-GPU nodes), and
helpers that read what Kubernetes shows about an endpoint."""

from __future__ import annotations

import json
from typing import Any

from tests.jobs.conftest import CLUSTER, cluster, settle, store  # noqa: F401 (fixture)
from tests.stack import Stack

ENDPOINTS = f"/api/v1/clusters/{CLUSTER}/endpoints"
LABEL = "podplane.io/endpoint"


def kubectl_json(stack: Stack, *args: str) -> Any:
    return json.loads(stack.kubectl(*args, "-o", "json"))


def endpoint_pods(stack: Stack, name: str) -> list[dict[str, Any]]:
    """Pods of the endpoint that are not being deleted, as kubectl lists them."""
    found = kubectl_json(stack, "get", "pods", "-n", "default", "-l", f"{LABEL}={name}")
    return [p for p in found["items"] if not p["metadata"].get("deletionTimestamp")]


def ready(pod: dict[str, Any]) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def owned_objects(stack: Stack) -> list[str]:
    """Every Deployment and Service carrying an endpoint label, in the sandbox's store."""
    s = store(stack)
    return sorted(f"{kind}/{o['metadata']['name']}"
                  for kind in ("deployments", "services")
                  for o in s.items("apps/deployments" if kind == "deployments" else kind,
                                   "default")
                  if LABEL in (o["metadata"].get("labels") or {}))
