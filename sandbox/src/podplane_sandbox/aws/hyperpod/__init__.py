"""SageMaker HyperPod emulator (JSON 1.1): clusters, nodes, training plans (MLflow tracking
servers: aws/mlflow.py)."""

from __future__ import annotations

from podplane_sandbox.aws.hyperpod.tags import TagsMixin


class HyperPodEmulator(TagsMixin):
    """Also the sandbox's `NodeSource` for the Kubernetes side (see `sandbox_nodes`)."""

    service = "sagemaker"


__all__ = ["HyperPodEmulator"]
