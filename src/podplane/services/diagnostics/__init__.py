"""Read-only investigation: `podplane doctor` today."""
