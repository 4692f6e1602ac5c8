"""`podplane cluster reconcile NAME`: the plan first, then (asked, or --yes) the reconcile,
followed live. Registers itself on the `cluster` group (cli/main.py imports it)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from podplane.cli.clusters import cluster_app
from podplane.cli.remote import URL, Remote, TokenOpt, UrlOpt, api, follow, out
from podplane.cli.remote import token_or_env as token_of


@cluster_app.command("reconcile")
def reconcile(
    name: str,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the plan only.")] = False,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask before repairing.")] = False,
    url: UrlOpt = URL, token: TokenOpt = "",
) -> None:
    """Put a degraded cluster's drifted dependencies back (never deletes anything)."""
    remote = Remote(url, token_of(token))
    path = api("clusters", name, "reconcile")
    planned = remote.call("POST", path, params={"dry_run": "true"})
    if not planned["changed"]:
        out.print(f"cluster {name}: nothing has drifted, nothing to change")
        return
    out.print(plan_table(planned))
    if dry_run:
        return
    if not yes:
        typer.confirm(f"Reconcile {name} as planned?", abort=True)
    started = remote.call("POST", path)
    if started.get("changed") is False:
        out.print(f"cluster {name}: the drift went away meanwhile, nothing to change")
        return
    follow(remote, started)


def plan_table(planned: dict[str, Any]) -> Table:
    table = Table("#", "action", "unit", "kind", "why", title="plan (dependency order)")
    for i, step in enumerate(planned["plan"], 1):
        table.add_row(str(i), step["action"], step["unit"], step["kind"], step["reason"])
    for alone in planned.get("left_alone", []):
        table.add_row("-", "leave", alone["unit"], alone["kind"], alone["reason"])
    return table
