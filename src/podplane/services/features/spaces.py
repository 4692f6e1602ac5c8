"""The spaces feature's cloud side: whether an EBS CSI driver someone else installed is there
(domain/features/spaces.py has the sources)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from podplane.domain.features import spaces as sp
from podplane.domain.features.model import FEATURE_TAG

if TYPE_CHECKING:
    from podplane.services.features.live import Live

Shape = dict[str, Any]


async def found(live: Live) -> Shape:
    """A driver add-on without podplane's tag is used as it is: the feature makes no role or
    association for its service account (that could override the owner's own identity)."""
    addon = await live.cloud.aws.eks.describe_addon(live.eks, sp.EBS_ADDON)
    foreign = addon is not None and addon.get("status") != "DELETING" and \
        (addon.get("tags") or {}).get(FEATURE_TAG) != sp.NAME
    return {sp.EBS_FOREIGN: foreign}
