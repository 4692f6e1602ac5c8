"""The sandbox inference operator's ScaledObject for a config's autoScalingSpec: valid under
KEDA's own CRD (../shared/crds/keda), aimed at the operator's Deployment, owned by the config,
with the spec's bounds, cooldown and Prometheus trigger. A managed worker's metrics reach the
workspace only when its config's metrics port is its invocation port."""

from __future__ import annotations

import copy

import jsonschema
import yaml

from podplane.domain.catalog import lookup
from podplane.domain.inference import managed
from podplane.domain.inference import managed_options as options
from podplane_sandbox.kube.controllers.inference_autoscaling import scaled_object
from podplane_sandbox.kube.controllers.inference_operator import publishes_metrics, scrape_port
from tests.clusters.test_kubeflow_manifests import SHARED_CRDS

AMP = "https://aps-workspaces.us-west-2.amazonaws.com/workspaces/ws-1a2b3c4d-5e6f"


def test_the_scaled_object_follows_the_spec_and_is_valid_under_kedas_crd() -> None:
    g5 = lookup("ml.g5.12xlarge")
    assert g5 is not None
    config = managed.render("llama", "s3://b-123/models/llama/", "b-123", "us-west-2", g5)
    config["spec"]["autoScalingSpec"] = options.autoscaling_spec(
        "llama", {"min_replicas": 1, "max_replicas": 3, "target": 4.0,
                  "cooldown_seconds": 90}, AMP)
    config["metadata"]["uid"] = "uid-1"
    found = scaled_object(config, "llama")
    crd = yaml.safe_load((SHARED_CRDS / "keda" / "keda.sh_scaledobjects.yaml").read_text())
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1"]
    jsonschema.validate(found, version["schema"]["openAPIV3Schema"])
    spec = found["spec"]
    assert spec["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment",
                                      "name": "llama"}
    assert (spec["minReplicaCount"], spec["maxReplicaCount"], spec["cooldownPeriod"]) == (
        1, 3, 90)
    (trigger,) = spec["triggers"]
    assert trigger["type"] == "prometheus" and trigger["metadata"]["serverAddress"] == AMP
    assert trigger["metadata"]["threshold"] == "4.0"
    assert found["metadata"]["ownerReferences"][0]["uid"] == "uid-1"


def test_a_managed_worker_publishes_metrics_only_on_its_invocation_port() -> None:
    """The operator scrapes `metrics.modelMetrics.port` (CRD default 8080), which AWS says must
    be the worker's `modelInvocationPort.containerPort`; podplane's config names vLLM's 8000."""
    g5 = lookup("ml.g5.12xlarge")
    assert g5 is not None
    config = managed.render("llama", "s3://b-123/models/llama/", "b-123", "us-west-2", g5)
    port = config["spec"]["worker"]["modelInvocationPort"]["containerPort"]
    assert config["spec"]["metrics"] == {"enabled": True, "modelMetrics": {"port": port}}
    assert publishes_metrics(config)
    default = copy.deepcopy(config)
    del default["spec"]["metrics"]
    assert scrape_port(default) == 8080 and not publishes_metrics(default)
    off = copy.deepcopy(config)
    off["spec"]["metrics"]["enabled"] = False
    assert scrape_port(off) is None and not publishes_metrics(off)
