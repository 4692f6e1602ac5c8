"""Read-only diagnoses: pure rules from what the cloud and the engine show to a verdict."""
