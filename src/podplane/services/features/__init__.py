"""Managed features: reversible, drift-aware switches for what runs on a cluster."""
