"""Durable operations engine: workflows of named steps, leases, resume, retry-step, cancel.

What services use: `engine.OpsEngine` (start, read, list, wait, retry, cancel),
`workflows.Workflow` (declaring steps), `context.StepContext` and `mutate.mutate_once` (inside a
step), `views.Operation` (what a read returns). The rest (control, starting, execute, runner)
is the engine's inside. See docs/operations.md and docs/adr/0001-operations-engine.md.
"""
