"""MCP rows for managed features (included by mcp/tools.py). One REST call each."""

from __future__ import annotations

from podplane.domain.clusters import ClusterName
from podplane.domain.features.requests import (
    FeatureChangeRequest,
    FeatureName,
    FeaturePlanRequest,
)
from podplane.mcp.tool import Tool, fields_of, typed
from podplane.services.features import service as features

CLUSTER = typed(ClusterName, "The managed cluster's name.", required=True)
FEATURE = typed(FeatureName, "The feature's name.", required=True)
BASE = "/api/v1/clusters/{cluster}/features"

TOOLS: tuple[Tool, ...] = (
    Tool("feature_list", "GET", BASE, features.list_features,
         "List a cluster's managed features: desired and observed state, drift (what "
         "differs), what each needs (requires) and what needs it (dependants), settings.",
         {"cluster": CLUSTER}),
    Tool("feature_get", "GET", BASE + "/{feature}", features.get_feature,
         "Get one feature: desired, observed, drift and the objects podplane left alone.",
         {"cluster": CLUSTER, "feature": FEATURE}),
    Tool("feature_plan", "POST", BASE + "/{feature}/plan", features.plan_feature,
         "Show what enabling, disabling or changing a feature would create, update and "
         "delete, in order, and what it would leave alone. Changes nothing.",
         {"cluster": CLUSTER, "feature": FEATURE,
          **fields_of(FeaturePlanRequest)}, returns_operation=False),
    Tool("feature_set", "PATCH", BASE + "/{feature}", features.set_feature,
         "Enable or disable a feature or change its settings; send only what changes. "
         "Equal to what is there: changed=false and no operation. Sending the current state "
         "of a drifted feature puts it back. Show the user feature_plan first.",
         {"cluster": CLUSTER, "feature": FEATURE, **fields_of(FeatureChangeRequest)}),
)
