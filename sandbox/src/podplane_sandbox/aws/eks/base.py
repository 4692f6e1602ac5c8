"""What the EKS mixins share: cluster lookup."""

from __future__ import annotations

from typing import Any, cast

from podplane_sandbox.aws.base import Emulator
from podplane_sandbox.aws.errors import eks_in_use, eks_not_found


class EksBase(Emulator):
    def cluster(self, name: str) -> dict[str, Any]:
        c = self.table("clusters").get(name)
        if c is None:
            raise eks_not_found(f"No cluster found for name: {name}.")
        return cast("dict[str, Any]", c)

    def active_cluster(self, name: str) -> dict[str, Any]:
        c = self.cluster(name)
        if c["status"] != "ACTIVE":
            raise eks_in_use(f"Cluster {name} is in {c['status']} state; wait until it is ACTIVE.")
        return c
