"""MCP rows for managed features (included by mcp/tools.py). One REST call each."""

from __future__ import annotations

from podplane.domain.features.requests import (
    FeatureChangeRequest,
    FeatureName,
    FeaturePlanRequest,
)
from podplane.mcp.tool import CLUSTER, Tool, fields_of, typed
from podplane.services.features import service as features

FEATURE = typed(FeatureName, "Feature.", required=True)
BASE = "/api/v1/clusters/{cluster}/features"

TOOLS: tuple[Tool, ...] = (
    Tool("feature_list", "GET", BASE, features.list_features,
         "A cluster's managed features: desired and observed state, drift, what each "
         "requires, its dependants, settings.",
         {"cluster": CLUSTER}),
    Tool("feature_get", "GET", BASE + "/{feature}", features.get_feature,
         "One feature: desired, observed, drift, and the objects podplane left alone.",
         {"cluster": CLUSTER, "feature": FEATURE}),
    Tool("feature_plan", "POST", BASE + "/{feature}/plan", features.plan_feature,
         "What enabling, disabling or changing a feature would create, update and delete, "
         "in order, and leave alone. Changes nothing.",
         {"cluster": CLUSTER, "feature": FEATURE,
          **fields_of(FeaturePlanRequest)}, returns_operation=False),
    Tool("feature_set", "PATCH", BASE + "/{feature}", features.set_feature,
         "Enable or disable a feature or change its settings, sending only what changes; "
         "its current state again puts a drifted feature back. Show the user feature_plan "
         "first.",
         {"cluster": CLUSTER, "feature": FEATURE, **fields_of(FeatureChangeRequest)}),
)
