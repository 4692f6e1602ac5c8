"""Amazon EKS emulator (REST-JSON): clusters, updates, add-ons, access entries, pod identity."""

from __future__ import annotations

from podplane_sandbox.aws.eks.clusters import ClustersMixin


class EksEmulator(ClustersMixin):
    service = "eks"


__all__ = ["EksEmulator"]
