"""Training jobs: recipes (data), the request, one renderer per job kind, and the job view."""
