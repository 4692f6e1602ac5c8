"""What the Kubernetes side reads from the AWS side, in one object: HyperPod instances (nodes),
EKS add-ons and Pod Identity associations (keyed by EKS cluster name), and S3 objects (what a
Mountpoint volume shows), and the network questions the kubelet asks (contracts.NetworkView):
can this node reach S3, can it reach an image's registry."""

from __future__ import annotations

from typing import Any

from podplane_sandbox.aws import fsx, mlflow_client, pull_reach
from podplane_sandbox.aws.hyperpod import autoscaling
from podplane_sandbox.aws.world import ACCOUNT, World
from podplane_sandbox.contracts import AddonSource, NodeSource, SandboxAddon, SandboxNode


class KubeView:
    def __init__(self, nodes: NodeSource, addons: AddonSource,
                 world: World | None = None) -> None:
        self.nodes, self.addons, self.world = nodes, addons, world

    def put_s3_object(self, bucket: str, key: str, data: bytes, role_arn: str) -> str | None:
        """Write as Mountpoint does with the driver's role: S3's AccessDenied text when the
        role's identity policies do not allow s3:PutObject on the object (IAM policy
        evaluation, iam_policy.py), else None once the object is stored."""
        from moto.s3.models import s3_backends

        from podplane_sandbox.aws.iam_policy import allows, entity_documents
        from podplane_sandbox.aws.iam_rules import _role

        role = _role(role_arn)
        docs = entity_documents([role]) if role is not None else []
        if not allows(docs, "s3:PutObject", f"arn:aws:s3:::{bucket}/{key}", {}):
            return (f"AccessDenied: {role_arn} is not authorized to perform: s3:PutObject on "
                    f"resource: arn:aws:s3:::{bucket}/{key}")
        try:
            s3_backends[ACCOUNT]["aws"].put_object(bucket, key, data)
        except Exception:  # no such bucket
            return f"NoSuchBucket: The specified bucket does not exist: {bucket}"
        return None

    def s3_refusal(self, bucket: str, key: str | None, role_arn: str | None) -> str | None:
        """S3's refusal of a read by the driver's role (ListBucket when `key` is None, else
        GetObject), from its identity policies and the bucket's policy (s3_access.py)."""
        from podplane_sandbox.aws import jumpstart_bucket, s3_access

        jumpstart_bucket.ensure(bucket)
        return s3_access.refusal(bucket, key, role_arn)

    def s3_blocked(self, node: dict[str, Any]) -> str | None:
        """Why `node` cannot reach S3 through its subnet's routes (issue 19), or None."""
        return pull_reach.s3_blocked(self.world, node) if self.world is not None else None

    def internet_blocked(self, node: dict[str, Any]) -> str | None:
        """Why `node` cannot reach an internet host such as the Hugging Face Hub, or None."""
        return pull_reach.internet_blocked(self.world, node) if self.world is not None else None

    def s3_keys(self, bucket: str, prefix: str) -> list[str]:
        """The keys under `prefix` (what listing a Mountpoint directory shows)."""
        from moto.s3.models import s3_backends

        from podplane_sandbox.aws import jumpstart_bucket

        jumpstart_bucket.ensure(bucket)
        try:
            found = s3_backends[ACCOUNT]["aws"].get_bucket(bucket)
        except Exception:  # no such bucket
            return []
        return sorted(k for k in found.keys.keys() if k.startswith(prefix))

    def pull_blocked(self, node: dict[str, Any], image: str) -> str | None:
        """kubelet's pull error when `node`'s subnet has no way to `image`'s registry, or None."""
        return pull_reach.pull_blocked(self.world, node, image) if self.world is not None else None

    def sandbox_nodes(self, eks_cluster_name: str | None = None) -> list[SandboxNode]:
        return self.nodes.sandbox_nodes(eks_cluster_name)

    def autoscaled_groups(self, eks_cluster_name: str | None) -> dict[str, Any] | None:
        return autoscaling.autoscaled(self.nodes, eks_cluster_name)

    def add_autoscaled_nodes(self, cluster: str, group: str, count: int) -> str | None:
        return autoscaling.add_nodes(self.nodes, cluster, group, count)

    def remove_autoscaled_nodes(self, cluster: str, group: str, ids: list[str]) -> str | None:
        return autoscaling.remove_nodes(self.nodes, cluster, group, ids)

    def sandbox_addons(self, eks_cluster_name: str | None = None) -> list[SandboxAddon]:
        return self.addons.sandbox_addons(eks_cluster_name)

    def pod_identity_role(self, eks_cluster_name: str | None, namespace: str,
                          service_account: str) -> str | None:
        return self.addons.pod_identity_role(eks_cluster_name, namespace, service_account)

    def fsx_file_system(self, fs_id: str) -> dict[str, Any] | None:
        """An FSx file system as DescribeFileSystems shows it (what the FSx CSI node plugin
        mounts), or None."""
        return fsx.lifecycle_of(self.world, fs_id) if self.world is not None else None

    def mlflow_log_run(self, role_arn: str | None, arn: str, experiment: str,
                       run: dict[str, Any]) -> str | None:
        """A training script's MLflow run, logged with the pod's role (aws/mlflow_client.py)."""
        if self.world is None:
            return None
        return mlflow_client.log_training_run(self.world, role_arn, arn, experiment, run)

    def s3_object(self, bucket: str, key: str) -> bytes | None:
        """An object's bytes from the sandbox's S3 (what Mountpoint would read), or None."""
        from moto.s3.models import s3_backends  # the dict moto's S3 API serves from

        try:
            found = s3_backends[ACCOUNT]["aws"].get_object(bucket, key)
        except Exception:  # no such bucket
            return None
        return bytes(found.value) if found is not None else None
