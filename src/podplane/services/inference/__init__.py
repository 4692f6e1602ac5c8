"""Inference endpoints (self-managed vLLM/SGLang): create, list, get, scale, delete, invoke."""
