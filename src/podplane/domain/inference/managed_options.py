"""A managed endpoint's KV cache, intelligent routing and autoscaling, as the operator's CRDs
name them (../shared/crds/hyperpod-inference, InferenceEndpointConfig and JumpStartModel alike):

- `kvCacheSpec` {enableL1Cache (CPU memory), enableL2Cache, l2CacheSpec {l2CacheBackend
  `redis` | `tieredstorage`, l2CacheLocalUrl}}. AWS docs "KV caching and intelligent routing":
  the Redis backend needs the Redis cluster's URL in l2CacheLocalUrl, tiered storage none;
  both run only in vLLM-based containers.
- `intelligentRoutingSpec` {enabled, routingStrategy prefixaware | kvaware | session |
  roundrobin}. The CRD: it cannot be added to an existing deployment, so only a create sets it.
- `autoScalingSpec` {minReplicaCount, maxReplicaCount, cooldownPeriod, prometheusTrigger
  {serverAddress (an Amazon Managed Prometheus workspace, the CRD's pattern), query,
  targetValue, metricType}} (AWS docs "Autoscaling policies for your HyperPod inference model
  deployment": the operator scales the deployment with KEDA from this spec).
Pure: refusals are 422 naming the request's field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from podplane.domain.errors import InvalidInput

Shape = dict[str, Any]
ROUTING = ("prefixaware", "kvaware", "session", "roundrobin")
KV_CACHE = ("l1", "tieredstorage", "redis")
REDIS_URL = re.compile(r"^rediss?://[A-Za-z0-9.\-]{1,253}(:\d{1,5})?(/\d{1,2})?$")
AMP_URL = re.compile(r"^https://aps-workspaces\.[a-zA-Z0-9-]+(?:\.[a-zA-Z0-9-]+)*\.amazonaws\.com"
                     r"/workspaces/ws-[a-zA-Z0-9-]+$")
# vLLM's per-pod gauges (vLLM docs, "Production metrics"), as the autoscale helper's requests
# name them: requests running, or waiting in the queue.
METRICS = {"running": "vllm:num_requests_running", "waiting": "vllm:num_requests_waiting"}
MANAGED_ONLY = ("routing", "kv_cache", "kv_cache_url")


def check(body: Mapping[str, Any]) -> None:
    """The request's cache and routing fields: only for managed endpoints, a Redis URL
    exactly when the L2 backend is Redis, and a vLLM-based image."""
    if body.get("kind") != "managed":
        for field in MANAGED_ONLY:
            if body.get(field) is not None:
                raise InvalidInput(f"{field} is for managed endpoints (the inference "
                                   "operator's).", field=field, hint="Send kind=managed.")
        return
    kv, url = body.get("kv_cache"), body.get("kv_cache_url")
    if kv == "redis" and not url:
        raise InvalidInput("kv_cache=redis needs the Redis cluster's URL.",
                           field="kv_cache_url", hint="For example redis://cache.internal:6379.")
    if url and kv != "redis":
        raise InvalidInput("kv_cache_url is the Redis L2 cache's URL: send kv_cache=redis "
                           "with it.", field="kv_cache_url")
    if url and not REDIS_URL.match(url):
        raise InvalidInput("kv_cache_url must be redis://host[:port][/db] or rediss://…",
                           field="kv_cache_url")
    image = str(body.get("image") or "")
    if (kv or body.get("routing")) and image and "vllm" not in image:
        raise InvalidInput("KV caching and intelligent routing run only in vLLM-based "
                           "containers.", field="kv_cache" if kv else "routing",
                           hint="Leave image out (the operator's default is vLLM).")


def kv_cache_spec(kv: str | None, url: str | None) -> Shape | None:
    if kv is None:
        return None
    spec: Shape = {"enableL1Cache": True, "enableL2Cache": kv != "l1"}
    if kv != "l1":
        spec["l2CacheSpec"] = {"l2CacheBackend": kv, **({"l2CacheLocalUrl": url} if url else {})}
    return spec


def routing_spec(strategy: str | None) -> Shape | None:
    return None if strategy is None else {"enabled": True, "routingStrategy": strategy}


def autoscaling_spec(name: str, auto: Mapping[str, Any], amp_url: str) -> Shape:
    """min/max replicas and a Prometheus trigger on the engine's gauge summed over the
    endpoint's pods, `target` per pod (metricType Average divides by the replica count)."""
    low, high = int(auto.get("min_replicas", 1)), int(auto["max_replicas"])
    if high < low:
        raise InvalidInput("autoscaling.max_replicas must be at least min_replicas.",
                           field="autoscaling.max_replicas")
    if not AMP_URL.match(amp_url):
        raise InvalidInput("The trigger's server must be an Amazon Managed Prometheus "
                           "workspace.", field="autoscaling")
    metric = METRICS[str(auto.get("metric", "running"))]
    return {"minReplicaCount": low, "maxReplicaCount": high,
            "cooldownPeriod": int(auto.get("cooldown_seconds", 300)),
            "prometheusTrigger": {
                "name": f"{name}-{auto.get('metric', 'running')}", "serverAddress": amp_url,
                "query": f'sum({metric}{{model_name="{name}"}})',
                "targetValue": float(auto.get("target", 8.0)), "metricType": "Average"}}


def options(body: Mapping[str, Any], amp_url: str | None) -> Shape:
    """The spec fields the request adds to the config (none when it asks for none)."""
    out: Shape = {}
    kv = kv_cache_spec(body.get("kv_cache"), body.get("kv_cache_url"))
    if kv:
        out["kvCacheSpec"] = kv
    routing = routing_spec(body.get("routing"))
    if routing:
        out["intelligentRoutingSpec"] = routing
    auto = body.get("autoscaling")
    if auto:
        out["autoScalingSpec"] = autoscaling_spec(body["name"], auto, amp_url or "")
    return out
