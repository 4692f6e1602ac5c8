"""The feature change request, field by field: the REST body and the MCP tool's input schema
derive from this declaration. Only the fields the client changes are sent (diff contract)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import ConfigDict, Field

from podplane.domain.effects import DryRun
from podplane.domain.features.catalog import BY_NAME, SettingValue

STRICT = ConfigDict(extra="forbid")
FEATURE_NAME_PATTERN = "^(" + "|".join(BY_NAME) + ")$"
FeatureName = Annotated[str, Field(pattern=FEATURE_NAME_PATTERN, min_length=1, max_length=64,
                                   description="The feature: " + ", ".join(BY_NAME) + ".")]


@dataclass(frozen=True, kw_only=True)
class FeaturePlanRequest:
    """The change whose plan is wanted (the same fields as a change, without acting)."""

    __pydantic_config__ = STRICT
    enabled: Annotated[bool | None, Field(
        description="On or off; omitted: unchanged.")] = None
    settings: Annotated[dict[str, SettingValue] | None, Field(
        description="Only those that change, e.g. {\"memory_percent\": 30} (see the "
        "feature's settings_schema).")] = None


@dataclass(frozen=True, kw_only=True)
class FeatureChangeRequest(FeaturePlanRequest):
    """Switch a feature on or off and/or change its settings; omitted fields keep their
    desired value. The same request for a drifted feature puts it back."""

    confirm: Annotated[bool, Field(
        description="Required when the change terminates nodes (managed autoscaling off "
        "or a group dropped from it) or deletes data (FSx, the Prometheus workspace, the "
        "MLflow server, a volume or claim): admin only.")] = False
    dry_run: DryRun = False
