"""The console page at `/`."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

router = APIRouter()

PLACEHOLDER = """<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>podplane</title></head><body style="font-family:sans-serif;margin:3rem">
<h1>podplane</h1><p>The control plane is running. The console is not built yet;
use the REST API (<a href="/api/docs">/api/docs</a>) or the MCP server at <code>/mcp/</code>.</p>
</body></html>"""


@router.get("/", response_class=HTMLResponse, include_in_schema=False)
async def index() -> HTMLResponse:
    return HTMLResponse(PLACEHOLDER)
