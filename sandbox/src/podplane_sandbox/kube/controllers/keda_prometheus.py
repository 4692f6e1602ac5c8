"""KEDA's `prometheus` scaler, only as far as the inference operator's ScaledObjects use it:
a query against the Amazon Managed Prometheus workspace the cluster's metrics are written to.

Sources: keda.sh/docs/2.17/scalers/prometheus (trigger metadata `serverAddress`, `query`,
`threshold`, `activationThreshold`; the query must return one element, a single-element
vector or a scalar; `ignoreNullValues` defaults to true: an empty result is 0, not an error);
Prometheus docs "Querying basics" (instant vector selectors `metric{label="value"}`,
"Aggregation operators" `sum`). The workspace holds what the HyperPod observability add-on's
collector scrapes and remote-writes (aws/amp_health.py for that chain), so a value exists only
while the cluster's `amazon-sagemaker-hyperpod-observability` add-on is ACTIVE.

What is emulated, stricter than Prometheus: a `serverAddress` of the form of an AMP
workspace's endpoint (anything else is unreachable from the sandbox), and a query of the one
form `sum(<metric>{<label>="<value>", ...})`, evaluated now over the fake engines of every
Running, Ready pod of the cluster (their own `/metrics`, fake_engine.py) as if the collector
had just scraped them; a managed endpoint's worker only when its config's metrics port is its
invocation port (inference_operator.publishes_metrics). Any other query answers nothing (the
metric is unavailable and the HPA keeps its replicas). Not emulated: scrape intervals and
staleness, SigV4 authentication (`awsRegion`, `authenticationRef`; sources are silent on what
the operator sets), the workspace id matching the add-on's configuration.
"""

from __future__ import annotations

import re
from typing import Any

from podplane_sandbox.kube.controllers import inference_operator
from podplane_sandbox.kube.fake_engine import engine_of, engines_of

Obj = dict[str, Any]
OBSERVABILITY = "amazon-sagemaker-hyperpod-observability"
AMP = re.compile(r"^https://aps-workspaces\.[a-z0-9-]+\.amazonaws\.com/workspaces/"
                 r"ws-[A-Za-z0-9-]+/?$")
SUM = re.compile(r"^\s*sum\s*\(\s*([A-Za-z_:][A-Za-z0-9_:]*\s*(\{[^{}]*\})?)\s*\)\s*$")


def install(ctx: Any, source: Any, eks_cluster_name: str | None) -> None:
    """Let KEDA read the workspace, when the AWS side shows the cluster's add-ons."""
    if hasattr(source, "sandbox_addons"):
        ctx.amp_metrics = AmpMetrics(ctx, source, eks_cluster_name)


def value(ctx: Any, meta: Obj) -> float | None:
    """The trigger's query answered now, or None (unavailable)."""
    metrics = getattr(ctx, "amp_metrics", None)
    return metrics.query(meta) if metrics is not None else None


class AmpMetrics:
    def __init__(self, ctx: Any, source: Any, eks_cluster_name: str | None) -> None:
        self.ctx, self.source, self.cluster = ctx, source, eks_cluster_name

    def _written(self) -> bool:
        return any(a.name == OBSERVABILITY and a.status == "ACTIVE"
                   for a in self.source.sandbox_addons(self.cluster))

    def query(self, meta: Obj) -> float | None:
        from podplane_sandbox.kube.controllers.keda import prometheus_value  # noqa: PLC0415

        found = SUM.match(str(meta.get("query", "")))
        if not AMP.match(str(meta.get("serverAddress", ""))) or found is None or \
                not self._written():
            return None
        selector = re.sub(r"\s+", "", found.group(1))
        total = 0.0   # no sample: 0 (ignoreNullValues)
        for pod, container in self._engines():
            status, _, text = engines_of(self.ctx.store).answer(pod, container, "GET",
                                                                 "/metrics", b"")
            sample = prometheus_value(text, selector) if status == 200 else None
            total += sample or 0.0
        return total

    def _scraped(self, pod: Obj) -> bool:
        config = inference_operator.config_of(self.ctx.store, pod)
        return config is None or inference_operator.publishes_metrics(config)

    def _engines(self) -> list[tuple[Obj, Obj]]:
        out = []
        for pod in self.ctx.store.items("pods"):
            status = pod.get("status") or {}
            ready = any(c.get("type") == "Ready" and c.get("status") == "True"
                        for c in status.get("conditions") or [])
            if status.get("phase") != "Running" or not ready or \
                    pod["metadata"].get("deletionTimestamp") or not self._scraped(pod):
                continue
            out += [(pod, c) for c in (pod.get("spec") or {}).get("containers") or []
                    if engine_of(c) in ("vllm", "sglang")]
        return out
