"""Ports (typing.Protocol) the services use, and their real adapters (boto3, Kubernetes)."""
