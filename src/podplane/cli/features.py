"""`podplane feature ...`: list, show, plan, enable, disable managed features over REST."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from podplane.cli.remote import Remote, TokenOpt, UrlOpt, api, steps_table, token_or_env, wait_op

feature_app = typer.Typer(no_args_is_help=True,
                          help="Managed features: reversible, drift-aware switches.")
out = Console()
URL = "http://127.0.0.1:3099"

Cluster = Annotated[str, typer.Argument(help="The managed cluster.")]
Feature = Annotated[str, typer.Argument(help="The feature (podplane feature list).")]
Settings = Annotated[list[str] | None, typer.Option(
    "--set", help="A setting as name=value (JSON values: --set groups='[\"gpu-a\"]').")]
Wait = Annotated[bool, typer.Option("--wait/--no-wait", help="Follow the operation live.")]
Yes = Annotated[bool, typer.Option("--yes", help="Confirm a change that terminates nodes or "
                                   "deletes data (admin only; the plan says which).")]


def install(app: typer.Typer) -> None:
    app.add_typer(feature_app, name="feature")


def _path(cluster: str, *rest: str) -> str:
    return api("clusters", cluster, "features", *rest)


def _settings(pairs: list[str] | None) -> dict[str, Any] | None:
    if not pairs:
        return None
    out_: dict[str, Any] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep:
            raise typer.BadParameter(f"{pair!r} is not name=value")
        try:
            out_[name] = json.loads(raw)
        except json.JSONDecodeError:
            out_[name] = raw
    return out_


def _state(f: dict[str, Any]) -> str:
    if f["drifted"]:
        return "[yellow]drifted[/]"
    return "[green]on[/]" if f["observed_enabled"] else "off"


@feature_app.command("list")
def feature_list(cluster: Cluster, url: UrlOpt = URL, token: TokenOpt = "") -> None:
    """Features with desired and observed state, drift and dependencies."""
    table = Table("feature", "desired", "observed", "requires", "settings")
    for f in Remote(url, token_or_env(token)).call("GET", _path(cluster)):
        table.add_row(f["name"], "on" if f["desired_enabled"] else "off", _state(f),
                      ", ".join(f["requires"]), json.dumps(f["desired_settings"]))
    out.print(table)


@feature_app.command("show")
def feature_show(cluster: Cluster, feature: Feature, url: UrlOpt = URL,
                 token: TokenOpt = "") -> None:
    """One feature: what it creates, drift (what differs), what it left alone."""
    out.print_json(data=Remote(url, token_or_env(token)).call("GET", _path(cluster, feature)))


@feature_app.command("plan")
def feature_plan(cluster: Cluster, feature: Feature,
                 on: Annotated[bool | None, typer.Option("--on/--off")] = None,
                 settings: Settings = None, url: UrlOpt = URL, token: TokenOpt = "") -> None:
    """What a change would create, update and delete, in order. Changes nothing."""
    answer = Remote(url, token_or_env(token)).call(
        "POST", _path(cluster, feature, "plan"),
        json={"enabled": on, "settings": _settings(settings)})
    _print_plan(answer["plan"])


def _print_plan(plan: dict[str, Any]) -> None:
    if not plan["actions"]:
        out.print("no change needed")
    for a in plan["actions"]:
        out.print(f"{a['verb']:7} {a['key']}")
        for d in a["differences"]:
            out.print(f"        {d}")
    for key in plan["left_alone"]:
        out.print(f"[cyan]left alone[/] {key}")


def _set(cluster: str, feature: str, body: dict[str, Any], url: str, token: str,
         wait: bool) -> None:
    token = token_or_env(token)
    answer = Remote(url, token).call("PATCH", _path(cluster, feature), json=body)
    _print_plan(answer["plan"])
    if "id" not in answer:
        return
    if wait:
        wait_op(answer["id"], url, token)
    else:
        out.print(steps_table(answer))
        out.print(f"follow it: podplane operation wait {answer['id']}")


@feature_app.command("enable")
def feature_enable(cluster: Cluster, feature: Feature, settings: Settings = None,
                   wait: Wait = True, yes: Yes = False, url: UrlOpt = URL,
                   token: TokenOpt = "") -> None:
    """Switch a feature on (or reconcile it when it drifted)."""
    _set(cluster, feature, {"enabled": True, "settings": _settings(settings), "confirm": yes},
         url, token, wait)


@feature_app.command("disable")
def feature_disable(cluster: Cluster, feature: Feature, wait: Wait = True, yes: Yes = False,
                    url: UrlOpt = URL, token: TokenOpt = "") -> None:
    """Switch a feature off: removes exactly what podplane made for it (--yes when that
    deletes data or nodes)."""
    _set(cluster, feature, {"enabled": False, "confirm": yes}, url, token, wait)
