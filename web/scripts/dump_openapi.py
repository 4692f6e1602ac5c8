"""Write the server's OpenAPI document to a file, without running a server.

The console's TypeScript client is generated from this document at build time,
so the console's types follow the API instead of drifting from it.
Usage: python web/scripts/dump_openapi.py OUT.json
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from podplane.bootstrap import build_app
from podplane.settings import Settings


def main(out: Path) -> None:
    with tempfile.TemporaryDirectory(prefix="podplane-openapi-") as tmp:
        settings = Settings(home=Path(tmp), database_url=f"sqlite:///{tmp}/openapi.db")
        schema = build_app(settings).openapi()
    out.write_text(json.dumps(schema, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
