"""The EKS Pod Identity webhook: at pod admission, a pod whose service account has a Pod Identity
association gets the container-credentials env and the projected token volume.

Only at admission (EKS docs "Understand how EKS Pod Identity works" / "Assign an IAM role to a
Kubernetes service account": pods that exist before the association must be restarted to get
credentials). The env names and token path are the ones the docs list; the agent serves
credentials on the node at 169.254.170.23.
"""

from __future__ import annotations

from typing import Any

from podplane_sandbox.kube.resources import ResourceType
from podplane_sandbox.kube.store import Store

Obj = dict[str, Any]
VOLUME = "eks-pod-identity-token"
TOKEN_DIR = "/var/run/secrets/pods.eks.amazonaws.com/serviceaccount"
ENV = {
    "AWS_CONTAINER_CREDENTIALS_FULL_URI": "http://169.254.170.23/v1/credentials",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE": f"{TOKEN_DIR}/{VOLUME}",
}


def install(store: Store, source: Any, eks_cluster_name: str | None,
            region: str = "us-west-2") -> None:
    """Register the webhook when the AWS side offers Pod Identity (a bare NodeSource does not)."""
    if not hasattr(source, "pod_identity_role"):
        return

    def admit(rt: ResourceType, obj: Obj, old: Obj | None) -> None:
        if old is not None:
            return
        ns = obj["metadata"].get("namespace", "default")
        account = (obj.get("spec") or {}).get("serviceAccountName") or "default"
        role = source.pod_identity_role(eks_cluster_name, ns, account)
        if role is not None:
            inject(obj, region)

    store.admit.setdefault("pods", []).append(admit)


def inject(pod: Obj, region: str) -> None:
    spec = pod.setdefault("spec", {})
    env = [{"name": k, "value": v} for k, v in
           {**ENV, "AWS_STS_REGIONAL_ENDPOINTS": "regional", "AWS_DEFAULT_REGION": region,
            "AWS_REGION": region}.items()]
    for container in spec.get("containers") or []:
        have = {e.get("name") for e in container.get("env") or []}
        container["env"] = (container.get("env") or []) + [e for e in env
                                                           if e["name"] not in have]
        mounts = container.setdefault("volumeMounts", [])
        if not any(m.get("name") == VOLUME for m in mounts):
            mounts.append({"name": VOLUME, "mountPath": TOKEN_DIR, "readOnly": True})
    volumes = spec.setdefault("volumes", [])
    if not any(v.get("name") == VOLUME for v in volumes):
        volumes.append({"name": VOLUME, "projected": {"sources": [{"serviceAccountToken": {
            "audience": "pods.eks.amazonaws.com", "expirationSeconds": 86400,
            "path": VOLUME}}]}})


def has_credentials(pod: Obj) -> bool:
    """Whether the webhook injected Pod Identity into this pod when it was admitted."""
    return all(any(e.get("name") == k for e in c.get("env") or [])
               for c in (pod.get("spec") or {}).get("containers") or [] for k in ENV)
