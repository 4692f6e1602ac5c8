"""Whether an EKS add-on can be healthy in its cluster, and the health issue EKS shows if not.

Rules and sources (docs/sandbox.md, "EKS and add-ons"):
- An add-on with a Deployment needs Ready nodes for its replicas; without them it stays
  CREATING, then DEGRADED with `InsufficientNumberOfReplicas` (code from botocore's eks model,
  `AddonIssue.code`; seen in pulumi-eks#1819, terraform-aws-eks#3001, eksctl#5458). DaemonSet-only
  add-ons (vpc-cni, kube-proxy, eks-pod-identity-agent) go ACTIVE on an empty cluster.
- The HyperPod training operator needs cert-manager (its webhook certificate is a cert-manager
  Certificate), a HyperPod cluster orchestrated by this EKS cluster, and a Pod Identity
  association for its controller (SageMaker docs "Installing the training operator"). The docs
  do not say which error AWS gives, so the sandbox is strict: CREATE_FAILED without cert-manager
  ACTIVE or without a HyperPod cluster, DEGRADED without the association.
- The Spaces add-on (`amazon-sagemaker-spaces`) runs jupyter-k8s, whose webhook and extension
  API server serve cert-manager certificates (jupyter-infra/jupyter-k8s
  `dist/chart/templates/cert-manager`), and its controller acts with the "Spaces Add-on
  Execution Role", always required (SageMaker docs "Set up permissions"). AWS does not
  publish the error: the sandbox is strict the same way (CREATE_FAILED without cert-manager
  ACTIVE, DEGRADED without the controller's Pod Identity association). Its other documented
  dependency, the EBS CSI driver, shows where AWS shows it: the spaces' home volumes stay
  Pending without it (kube/controllers/infra.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from podplane_sandbox.aws.eks.catalog import POD_IDENTITY_ACCOUNTS, needs_nodes

TRAINING_OPERATOR = "amazon-sagemaker-hyperpod-training-operator"
SPACES = "amazon-sagemaker-spaces"
NEEDS_CERT_MANAGER = (TRAINING_OPERATOR, SPACES)
NO_NODES_DEGRADE_SECONDS = 20 * 60.0  # CREATING without nodes this long, then DEGRADED

Issue = dict[str, Any]


@dataclass(frozen=True)
class ClusterFacts:
    """What an add-on's health depends on, read from the sandbox's state at one instant."""

    ready_nodes: int
    hyperpod_clusters: int
    addon_status: dict[str, str]
    associations: frozenset[tuple[str, str]]  # (namespace, serviceAccount)


NO_FACTS = ClusterFacts(0, 0, {}, frozenset())


def cluster_facts(world_state: dict[str, Any], eks_state: dict[str, Any],
                  cluster: str) -> ClusterFacts:
    """Nodes are HyperPod instances whose orchestrator is this EKS cluster; Running ones are the
    Ready Nodes the Kubernetes side shows (sandbox/kube/controllers/nodes.py)."""
    sagemaker = world_state.get("sagemaker", {})
    hyperpods, ready = 0, 0
    for hp in sagemaker.get("clusters", {}).values():
        arn = ((hp.get("Orchestrator") or {}).get("Eks") or {}).get("ClusterArn", "")
        if arn.rsplit("/", 1)[-1] != cluster:
            continue
        hyperpods += 1
        nodes = sagemaker.get("nodes", {}).get(hp["ClusterName"], {})
        ready += sum(1 for n in nodes.values() if n.get("Status") == "Running")
    addons = eks_state.get("addons", {}).get(cluster, {})
    assocs = eks_state.get("pod_identity", {}).get(cluster, {}).values()
    return ClusterFacts(ready, hyperpods,
                        {name: a["status"] for name, a in addons.items()},
                        frozenset((a["namespace"], a["serviceAccount"]) for a in assocs))


def issue(code: str, message: str, *resources: str) -> Issue:
    return {"code": code, "message": message, "resourceIds": list(resources)}


def replicas_issue(name: str) -> Issue:
    return issue("InsufficientNumberOfReplicas",
                 "The add-on is unhealthy because it doesn't have the desired number of "
                 "replicas.", name)


def prerequisite_failure(name: str, facts: ClusterFacts) -> Issue | None:
    """A missing prerequisite that makes creation fail (CREATE_FAILED)."""
    if name not in NEEDS_CERT_MANAGER:
        return None
    if name == TRAINING_OPERATOR and facts.hyperpod_clusters == 0:
        return issue("ConfigurationConflict",
                     "No SageMaker HyperPod cluster is orchestrated by this EKS cluster; the "
                     "training operator runs only on HyperPod clusters.")
    if facts.addon_status.get("cert-manager") != "ACTIVE":
        return issue("K8sResourceNotFound",
                     "certificates.cert-manager.io and issuers.cert-manager.io were not found "
                     "(or cert-manager's webhook is not serving): install the cert-manager "
                     "add-on and wait until it is ACTIVE first.",
                     "cert-manager")
    return None


def _controller_acts_as(name: str) -> str:
    return "call SageMaker (DescribeClusterNode)" if name == TRAINING_OPERATOR else \
        "manage spaces (presigned URLs, SSM sessions)"


def permission_issue(name: str, facts: ClusterFacts) -> Issue | None:
    """The add-on's controller has no Pod Identity association for its service account."""
    if name not in (TRAINING_OPERATOR, SPACES):
        return None
    account = POD_IDENTITY_ACCOUNTS[name]
    if account in facts.associations:
        return None
    return issue("AddonPermissionFailure",
                 f"No Pod Identity association for service account {account[0]}/{account[1]}: "
                 f"the operator cannot {_controller_acts_as(name)}.", f"{account[1]}")


def nodes_issue(name: str, facts: ClusterFacts) -> Issue | None:
    if needs_nodes(name) and facts.ready_nodes == 0:
        return replicas_issue(name)
    return None
