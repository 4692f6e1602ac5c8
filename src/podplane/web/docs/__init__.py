"""The REST API's reference at /api/docs: Swagger UI served from installed packages under the
console's CSP, never from a CDN.

The Swagger UI bundle and stylesheet come from the `fastapi-offline` wheel (a pinned
dependency that ships them as package data); the start-up script is ours (`init.js`), since
the CSP refuses inline scripts. Chosen over an npm build in web/ because the API docs then work
in a server without the console built (`make console` needs Node.js).
"""

from __future__ import annotations

import importlib.util
import mimetypes
from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse, HTMLResponse, Response

from podplane.domain.errors import NotFound
from podplane.web.pages import ASSET_HEADERS, PAGE_HEADERS

router = APIRouter(include_in_schema=False)
DOCS = "/api/docs"
HERE = Path(__file__).parent


def _vendor_dir() -> Path | None:
    spec = importlib.util.find_spec("fastapi_offline")
    if spec is None or spec.origin is None:
        return None
    return Path(spec.origin).parent / "static"


ASSETS: dict[str, Path | None] = {
    "swagger-ui-bundle.js": (d / "swagger-ui-bundle.js") if (d := _vendor_dir()) else None,
    "swagger-ui.css": (d / "swagger-ui.css") if d else None,
    "favicon.png": (d / "favicon.png") if d else None,
    "init.js": HERE / "init.js",
}
PAGE = f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>podplane API</title><link rel="icon" href="{DOCS}/assets/favicon.png">
<link rel="stylesheet" href="{DOCS}/assets/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="{DOCS}/assets/swagger-ui-bundle.js"></script>
<script src="{DOCS}/assets/init.js"></script></body></html>"""


@router.get(DOCS)
async def api_docs() -> Response:
    return HTMLResponse(PAGE, headers=PAGE_HEADERS)


@router.get(DOCS + "/assets/{name}")
async def api_docs_asset(name: str) -> Response:
    path = ASSETS.get(name)
    if path is None or not path.is_file():
        raise NotFound(f"No API docs asset named {name!r}.",
                       hint="Install podplane with its dependencies (fastapi-offline).")
    media_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
    # Not content-hashed: cache briefly so an upgrade shows up.
    headers = {**ASSET_HEADERS, "Cache-Control": "public, max-age=3600"}
    return FileResponse(path, media_type=media_type, headers=headers)
