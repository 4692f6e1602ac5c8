"""Amazon EKS emulator (REST-JSON): clusters, updates, add-ons, access entries, pod identity."""

from __future__ import annotations

from podplane.sandbox.aws.eks.access import AccessMixin
from podplane.sandbox.aws.eks.addons import AddonsMixin
from podplane.sandbox.aws.eks.clusters import ClustersMixin


class EksEmulator(ClustersMixin, AddonsMixin, AccessMixin):
    service = "eks"


__all__ = ["EksEmulator"]
