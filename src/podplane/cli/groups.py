"""`podplane group ...` and `podplane node ...`: instance groups and nodes over REST."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from podplane.cli.remote import (
    Remote,
    TokenOpt,
    UrlOpt,
    api,
    steps_table,
    token_or_env,
    wait_op,
)
from podplane.domain.instance_groups import CapacityType

group_app = typer.Typer(no_args_is_help=True, help="Add, scale and delete instance groups.")
node_app = typer.Typer(no_args_is_help=True,
                       help="Node health; reboot, replace, delete (investigate first).")
out = Console()
URL = "http://127.0.0.1:3099"

Cluster = Annotated[str, typer.Argument(help="The managed cluster.")]
Group = Annotated[str, typer.Argument(help="The instance group.")]
Node = Annotated[str, typer.Argument(help="Instance id (i-...) or Node name (hyperpod-i-...).")]
Wait = Annotated[bool, typer.Option("--wait/--no-wait", help="Follow the operation live.")]
Yes = Annotated[bool, typer.Option("--yes", help="Confirm a destructive change.")]
DryRun = Annotated[bool, typer.Option("--dry-run", help="Show the plan; change nothing.")]


def install(app: typer.Typer) -> None:
    app.add_typer(group_app, name="group")
    app.add_typer(node_app, name="node")


def _groups(cluster: str, *rest: str) -> str:
    return api("clusters", cluster, "instance-groups", *rest)


def _nodes(cluster: str, *rest: str) -> str:
    return api("clusters", cluster, "nodes", *rest)


def _show(answer: dict[str, Any], url: str, token: str, wait: bool) -> None:
    """An operation (followed live with --wait), or the plan / 'no change'."""
    plan = answer.get("plan") or {}
    for note in plan.get("notes", []):
        out.print(f"[cyan]note[/] {note}")
    if plan.get("warning"):
        out.print(f"[yellow]warning[/] {plan['warning']}")
    if "id" not in answer:
        if answer.get("dry_run"):
            out.print_json(data=plan)
        else:
            out.print("no change needed")
        return
    if wait:
        wait_op(answer["id"], url, token)
    else:
        out.print(steps_table(answer))
        out.print(f"follow it: podplane operation wait {answer['id']}")


@group_app.command("list")
def group_list(cluster: Cluster, url: UrlOpt = URL, token: TokenOpt = "") -> None:
    """List instance groups as HyperPod reports them."""
    table = Table("name", "type", "capacity", "efa-only", "status", "current/target")
    for g in Remote(url, token_or_env(token)).call("GET", _groups(cluster)):
        table.add_row(g["name"], g["instance_type"], g["capacity_type"],
                      "yes" if g["efa_only"] else "", g["status"],
                      f"{g['current_count']}/{g['target_count']}")
    out.print(table)


@group_app.command("add")
def group_add(
    cluster: Cluster, name: Annotated[str, typer.Argument(help="New group name.")],
    instance_type: Annotated[str, typer.Option("--type", help="e.g. ml.g5.8xlarge")],
    count: Annotated[int, typer.Option("--count", min=1)],
    az: Annotated[str | None, typer.Option("--az", help="AZ (a training plan's wins).")] = None,
    capacity: Annotated[CapacityType, typer.Option("--capacity")] = CapacityType.ON_DEMAND,
    plan_arn: Annotated[str | None, typer.Option("--training-plan")] = None,
    efa_only: Annotated[bool, typer.Option("--efa-only")] = False,
    ebs_gb: Annotated[int, typer.Option("--ebs-gb")] = 500,
    subnet: Annotated[str | None, typer.Option("--subnet")] = None,
    new_subnet: Annotated[bool, typer.Option("--new-subnet")] = False,
    dry_run: DryRun = False, wait: Wait = True, url: UrlOpt = URL, token: TokenOpt = "",
) -> None:
    """Add an instance group (subnet, lifecycle scripts and role are derived)."""
    body = {"name": name, "instance_type": instance_type, "count": count,
            "availability_zone": az, "capacity_type": capacity.value, "training_plan_arn": plan_arn,
            "efa_only": efa_only, "ebs_gb": ebs_gb, "subnet_id": subnet,
            "new_subnet": new_subnet, "dry_run": dry_run}
    token = token_or_env(token)
    answer = Remote(url, token).call("POST", _groups(cluster),
                                     json={k: v for k, v in body.items() if v is not None})
    _show(answer, url, token, wait)


@group_app.command("scale")
def group_scale(cluster: Cluster, group: Group,
                count: Annotated[int, typer.Argument(min=0, help="New node count.")],
                yes: Yes = False, dry_run: DryRun = False, wait: Wait = True, url: UrlOpt = URL,
                token: TokenOpt = "") -> None:
    """Scale a group (0 allowed); scaling down terminates nodes (admin, needs --yes)."""
    token = token_or_env(token)
    answer = Remote(url, token).call("PATCH", _groups(cluster, group),
                                     json={"count": count, "confirm": yes, "dry_run": dry_run})
    _show(answer, url, token, wait)


@group_app.command("delete")
def group_delete(cluster: Cluster, group: Group, yes: Yes = False, dry_run: DryRun = False,
                 wait: Wait = True, url: UrlOpt = URL, token: TokenOpt = "") -> None:
    """Delete a group and terminate its nodes (needs --yes)."""
    token = token_or_env(token)
    answer = Remote(url, token).call("DELETE", _groups(cluster, group),
                                     params={"confirm": yes, "dry_run": dry_run})
    _show(answer, url, token, wait)


@node_app.command("list")
def node_list(cluster: Cluster, group: Annotated[str | None, typer.Option("--group")] = None,
              url: UrlOpt = URL, token: TokenOpt = "") -> None:
    """Nodes with health from HyperPod and Kubernetes, GPUs, and the suggested next step."""
    params = {"instance_group": group} if group else {}
    table = Table("node", "group", "type", "status", "health", "fault", "gpus", "next step")
    for n in Remote(url, token_or_env(token)).call("GET", _nodes(cluster), params=params):
        h, gpus = n["health"], n["gpus"]
        table.add_row(n["id"], n["instance_group"], n["instance_type"], h["instance_status"],
                      h["state"], h["fault_type"] or "",
                      f"{gpus['allocated']}/{gpus['allocatable']}",
                      h["suggested_action"] or "")
    out.print(table)


@node_app.command("describe")
def node_describe(cluster: Cluster, node: Node, url: UrlOpt = URL, token: TokenOpt = "") -> None:
    """One node in full (JSON), including the escalation investigate -> reboot -> replace."""
    out.print_json(data=Remote(url, token_or_env(token)).call("GET", _nodes(cluster, node)))


@node_app.command("reboot")
def node_reboot(cluster: Cluster, node: Node, dry_run: DryRun = False, wait: Wait = True,
                url: UrlOpt = URL, token: TokenOpt = "") -> None:
    """Reboot a Running node (keeps instance storage)."""
    token = token_or_env(token)
    answer = Remote(url, token).call("POST", _nodes(cluster, node, "reboot"),
                                     params={"dry_run": dry_run})
    _show(answer, url, token, wait)


@node_app.command("replace")
def node_replace(cluster: Cluster, node: Node, yes: Yes = False, dry_run: DryRun = False,
                 wait: Wait = True, url: UrlOpt = URL, token: TokenOpt = "") -> None:
    """Replace a node with a new instance (needs --yes; instance storage is lost)."""
    token = token_or_env(token)
    answer = Remote(url, token).call("POST", _nodes(cluster, node, "replace"),
                                     params={"confirm": yes, "dry_run": dry_run})
    _show(answer, url, token, wait)


@node_app.command("delete")
def node_delete(cluster: Cluster, node: Node, yes: Yes = False, dry_run: DryRun = False,
                wait: Wait = True, url: UrlOpt = URL, token: TokenOpt = "") -> None:
    """Terminate a node; its group shrinks by one (needs --yes)."""
    token = token_or_env(token)
    answer = Remote(url, token).call("DELETE", _nodes(cluster, node),
                                     params={"confirm": yes, "dry_run": dry_run})
    _show(answer, url, token, wait)
