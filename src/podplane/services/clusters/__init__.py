"""Clusters: create, import, inspect, status and delete, with their workflows."""
