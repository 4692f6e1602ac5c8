"""The console: its page routes, its hashed assets, and the session it starts with.

The console is a single-page app built from web/ into static/console/ (see docs/console.md).
Every console path returns the same index.html; the app routes in the browser. The page
carries the current session (or null) so the first paint needs no request that could 401.
"""

from __future__ import annotations

import json
import mimetypes
import re
from collections.abc import Mapping
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, Response

from podplane.domain.errors import NotFound, Unauthenticated
from podplane.services.access import auth as auth_service
from podplane.services.context import AppState

router = APIRouter()

STATIC = Path(__file__).parent / "static" / "console"
# Path prefixes the console owns; add one when a page with a new prefix lands in web/src/routes.tsx.
CONSOLE_PREFIXES = ("audit", "tokens", "operations", "clusters", "create-cluster")
ASSET_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}")

# The console talks only to its own origin; the browser enforces it too.
CSP = "; ".join([
    "default-src 'self'", "script-src 'self'", "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:", "font-src 'self'", "connect-src 'self'",
    "object-src 'none'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
])
PAGE_HEADERS = {
    "Cache-Control": "no-store", "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}
ASSET_HEADERS = {"Cache-Control": "public, max-age=31536000, immutable",
                 "X-Content-Type-Options": "nosniff"}

NOT_BUILT = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>podplane</title></head><body style="font-family:sans-serif;margin:3rem">
<h1>podplane</h1><p>The control plane is running, but the web console is not built.
Run <code>make console</code> (needs Node.js 20+ and npm), or use the REST API
(<a href="/api/docs">/api/docs</a>) and the MCP server at <code>/mcp/</code>.</p>
</body></html>"""


async def console_page(request: Request) -> Response:
    index = STATIC / "index.html"
    if not index.is_file():
        return HTMLResponse(NOT_BUILT, headers={"Cache-Control": "no-store"})
    boot = {"session": await _whoami(request)}
    return HTMLResponse(_with_boot(index.read_text(), boot), headers=PAGE_HEADERS)


router.add_api_route("/", console_page, methods=["GET"], include_in_schema=False)
for _prefix in CONSOLE_PREFIXES:
    router.add_api_route(f"/{_prefix}", console_page, methods=["GET"], include_in_schema=False)
    router.add_api_route(f"/{_prefix}/{{rest:path}}", console_page, methods=["GET"],
                         include_in_schema=False)


@router.get("/assets/{name}", include_in_schema=False)
async def asset(name: str, request: Request) -> Response:
    """Content-hashed build output; the pre-compressed copy goes to browsers that accept gzip."""
    path = STATIC / "assets" / name
    if not ASSET_NAME.fullmatch(name) or name.endswith(".gz") or not path.is_file():
        raise NotFound(f"No console asset named {name!r}.",
                       hint="The console may have been rebuilt; reload the page.")
    media_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
    packed = path.with_name(f"{name}.gz")
    if "gzip" in request.headers.get("accept-encoding", "") and packed.is_file():
        headers = {**ASSET_HEADERS, "Content-Encoding": "gzip", "Vary": "Accept-Encoding"}
        return FileResponse(packed, media_type=media_type, headers=headers)
    return FileResponse(path, media_type=media_type,
                        headers={**ASSET_HEADERS, "Vary": "Accept-Encoding"})


async def _whoami(request: Request) -> dict[str, str] | None:
    app: AppState = request.app.state.podplane
    sid = request.cookies.get(app.settings.session_cookie)  # named as the session router sets it
    if not sid:
        return None
    try:
        who = await auth_service.principal_for_session(app, sid)
    except Unauthenticated:
        return None
    return {"name": who.name, "role": who.role.value, "face": who.face}


def _with_boot(html: str, boot: Mapping[str, object]) -> str:
    # "<" escaped so no value can close the script element.
    data = json.dumps(boot).replace("<", "\\u003c")
    tag = f'<script id="podplane-boot" type="application/json">{data}</script>'
    return html.replace("</head>", f"{tag}</head>", 1)
