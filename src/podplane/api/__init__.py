"""The REST face: thin routers over services."""
