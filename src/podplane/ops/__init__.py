"""Durable operations engine: workflows, steps, idempotency, resume, retry-step."""
