"""Managed features: the catalogue, their resources and the plan between desired and seen."""
