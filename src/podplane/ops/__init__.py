"""Durable operations engine: workflows of named steps, leases, resume, retry-step, cancel.

See docs/operations.md and docs/adr/0001-operations-engine.md.
"""
