"""Training jobs: submit from a recipe, list, get, cancel, delete, logs and events."""
