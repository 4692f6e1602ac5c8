"""The sandbox's metrics-api scaler reads Prometheus text as KEDA does (first sample whose
labels match the selector), and the fake engines' gauges come from the load on a Service."""

from __future__ import annotations

from podplane_sandbox.kube.controllers import keda
from podplane_sandbox.kube.controllers.hpa import quantity
from podplane_sandbox.kube.fake_engine import Counters, metrics

TEXT = metrics("vllm", "qwen", Counters(requests=3), (5, 2)) + \
    'vllm:num_requests_running{model_name="other"} 9.0\n'


def test_selector_with_and_without_labels() -> None:
    assert keda.prometheus_value(TEXT, "vllm:num_requests_running") == 5.0
    assert keda.prometheus_value(TEXT, 'vllm:num_requests_running{model_name="other"}') == 9.0
    assert keda.prometheus_value(TEXT, "vllm:num_requests_waiting") == 2.0
    assert keda.prometheus_value(TEXT, "vllm:request_success_total") == 3.0
    assert keda.prometheus_value(TEXT, "sglang:num_queue_reqs") is None
    assert keda.prometheus_value(TEXT, 'vllm:num_requests_running{model_name="x"}') is None


def test_sglang_gauges_and_names() -> None:
    text = metrics("sglang", "m", Counters(), (1, 4))
    assert keda.prometheus_value(text, "sglang:num_queue_reqs") == 4.0
    assert "# TYPE sglang:num_running_reqs gauge" in text
    trigger = {"type": "metrics-api", "metadata": {"valueLocation": "vllm:num_requests_running"}}
    assert keda.metric_name(0, trigger) == "s0-metric-api-vllm-num-requests-running"
    assert quantity("2500m") == 2.5 and quantity("8") == 8.0
