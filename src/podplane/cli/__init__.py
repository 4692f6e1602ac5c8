"""The `podplane` command: a face beside `api/` and `mcp/` (most commands are REST calls)."""

from podplane.cli.main import app

__all__ = ["app"]
