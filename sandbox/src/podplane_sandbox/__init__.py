"""The embedded sandbox cloud: AWS endpoint, Kubernetes API, controllers, virtual clock."""
