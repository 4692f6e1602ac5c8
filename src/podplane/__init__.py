"""podplane: a control plane for GPU clusters on AWS (EKS + SageMaker HyperPod)."""

__version__ = "0.1.0"
