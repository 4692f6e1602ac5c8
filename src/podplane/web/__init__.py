"""The console face: serves the built web console (see web/ and docs/console.md)."""
