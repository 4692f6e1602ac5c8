"""Adapters to the outside world (AWS, Kubernetes) behind ports."""
