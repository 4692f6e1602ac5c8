"""Nodes: list, reboot, replace and delete, with their workflows."""
