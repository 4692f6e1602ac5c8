"""Inference endpoints (self-managed vLLM/SGLang): the request, its checks, and the manifests."""
