"""The CLI's REST client: a running control plane over HTTP (the CLI is a face too), the
operation step view, and following an operation live. The commands are rows in `cli/table.py`
form (`cli/operations.py`, `cli/clusters.py`, `cli/groups.py`)."""

from __future__ import annotations

import os
from typing import Annotated, Any
from urllib.parse import quote

import httpx
import typer
from rich.console import Console
from rich.live import Live
from rich.table import Table

out = Console()
URL = "http://127.0.0.1:3099"
TERMINAL = {"succeeded", "failed", "cancelled"}
STATUS_STYLE = {"succeeded": "green", "failed": "red", "running": "cyan", "cancelled": "yellow"}

UrlOpt = Annotated[str, typer.Option("--url", envvar="PODPLANE_URL", help="Control plane URL.")]
TokenOpt = Annotated[str, typer.Option("--token", envvar="PODPLANE_TOKEN", help="API token.",
                                       show_default=False)]


def api(*segments: str) -> str:
    """`/api/v1/<segments>` with each segment percent-encoded, so a name holding `/`, `?` or `#`
    stays one path segment (the server then refuses it as a name) instead of another route."""
    return "/api/v1/" + "/".join(quote(str(s), safe="") for s in segments)


class Remote:
    """One REST client; errors become a short message and exit code 1."""

    def __init__(self, url: str, token: str) -> None:
        self.http = httpx.Client(base_url=url.rstrip("/"), timeout=70.0, headers={
            "Authorization": f"Bearer {token}", "X-Podplane-Face": "cli"})

    def call(self, method: str, path: str, **kw: Any) -> Any:
        try:
            r = self.http.request(method, path, **kw)
        except httpx.HTTPError as e:
            raise _fail(f"cannot reach {self.http.base_url}: {e}") from None
        if r.status_code >= 400:
            body = _json(r)
            hint = f"\nhint: {body['hint']}" if body.get("hint") else ""
            raise _fail(f"{body.get('code', r.status_code)}: {body.get('detail', r.text)}{hint}")
        return r.json() if r.content else None


def steps_table(op: dict[str, Any]) -> Table:
    status = op["status"]
    table = Table(title=f"{op['kind']} {op['target']}  [{STATUS_STYLE.get(status, '')}]"
                        f"{status}[/]  ({op['id']})")
    for col in ("step", "status", "phase", "attempt", "detail / error"):
        table.add_column(col)
    for s in op.get("steps", []):
        err = s.get("error") or {}
        note = f"[red]{err.get('message')}[/] {err.get('hint') or ''}" if err else _detail(s)
        style = STATUS_STYLE.get(s["status"], "")
        table.add_row(s["name"], f"[{style}]{s['status']}[/]", s.get("phase") or "",
                      str(s.get("attempt", "")), note)
    return table


def wait_op(op_id: str, url: str, token: str) -> None:
    """Follow an operation live until it ends; exit 1 unless it succeeded."""
    remote = Remote(url, token_or_env(token))
    follow(remote, remote.call("GET", api("operations", op_id)))


def follow(remote: Remote, op: dict[str, Any]) -> None:
    """Live step table until the operation ends; exit 1 (with the retry command) unless it
    succeeded. Long-polls with the last revision, so each change shows at once."""
    with Live(steps_table(op), console=out, refresh_per_second=4) as live:
        while op["status"] not in TERMINAL:
            op = remote.call("GET", api("operations", op["id"], "wait"),
                             params={"timeout": 30, "revision": op["revision"]})
            live.update(steps_table(op))
    if op["status"] != "succeeded":
        failed = next((s for s in op["steps"] if s["status"] == "failed"), None)
        if failed:
            out.print(f"[red]step {failed['name']} failed[/red]; after fixing the cause: "
                      f"podplane operation retry {op['id']} {failed['name']}")
        raise typer.Exit(1)


def _detail(step: dict[str, Any]) -> str:
    detail = step.get("detail") or {}
    return str(detail.get("message", ""))


def _json(r: httpx.Response) -> dict[str, Any]:
    try:
        body = r.json()
    except ValueError:
        return {}
    return body if isinstance(body, dict) else {}


def token_or_env(token: str) -> str:
    if token:
        return token
    env = os.environ.get("PODPLANE_TOKEN")
    if not env:
        raise _fail("no token: pass --token or set PODPLANE_TOKEN "
                    "(create one with: podplane token create --name me --role operator)")
    return env


def _fail(message: str) -> typer.Exit:
    Console(stderr=True).print(f"[red]error[/red] {message}")
    return typer.Exit(1)

