"""`podplane doctor`: the account check over REST, as a table (exit 1 when a check fails)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.table import Table

from podplane.cli.remote import Remote, TokenOpt, UrlOpt, out, token_or_env

STYLE = {"ok": "green", "warn": "yellow", "fail": "red"}


def doctor(
    instance_type: Annotated[str | None, typer.Option("--type", help="Instance type a create "
                                                      "would use, e.g. ml.p5.48xlarge.")] = None,
    count: Annotated[int, typer.Option("--count", min=1, help="Instances it would ask for.")
                     ] = 1,
    cluster: Annotated[str | None, typer.Option("--cluster", help="Check this cluster's EKS "
                                                "access entry for podplane's identity.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the raw findings.")] = False,
    url: UrlOpt = "http://127.0.0.1:3099", token: TokenOpt = "",
) -> None:
    """Check the AWS account for what a create needs; every finding says how to fix it."""
    params: dict[str, Any] = {"count": count}
    params.update({k: v for k, v in (("instance_type", instance_type), ("cluster", cluster))
                   if v})
    report = Remote(url, token_or_env(token)).call("GET", "/api/v1/doctor", params=params)
    if as_json:
        out.print_json(json.dumps(report))
    else:
        out.print(findings_table(report))
    if report["status"] == "fail":
        raise typer.Exit(1)


def findings_table(report: dict[str, Any]) -> Table:
    table = Table("check", "status", "detail", "fix",
                  title=f"podplane doctor: [{STYLE[report['status']]}]{report['status']}[/]")
    for f in report["findings"]:
        table.add_row(f["check"], f"[{STYLE[f['status']]}]{f['status']}[/]", f["detail"],
                      f["fix"])
    return table
