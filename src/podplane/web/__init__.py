"""Serves the console (placeholder until the console lands)."""
