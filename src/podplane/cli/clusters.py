"""`podplane cluster ...`: clusters over REST, with a live step view for create and delete."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from podplane.cli.remote import (
    Remote,
    TokenOpt,
    UrlOpt,
    api,
    follow,
    out,
    steps_table,
)
from podplane.cli.remote import token_or_env as token_of

cluster_app = typer.Typer(no_args_is_help=True, help="Create, inspect, import and delete "
                          "clusters (EKS + HyperPod).")
URL = "http://127.0.0.1:3099"


@cluster_app.command("create")
def create(
    name: str,
    availability_zone: Annotated[str, typer.Option("--az", help="AZ for the GPU nodes.")],
    instance_type: Annotated[str, typer.Option("--type", help="e.g. ml.p5.48xlarge")],
    count: Annotated[int, typer.Option("--count", min=1)],
    capacity_type: Annotated[str, typer.Option("--capacity",
                                               help="on-demand | spot | training-plan")
                             ] = "on-demand",
    training_plan_arn: Annotated[str | None, typer.Option("--training-plan")] = None,
    region: Annotated[str, typer.Option("--region")] = "us-west-2",
    no_deep_health_checks: Annotated[bool, typer.Option("--no-deep-health-checks")] = False,
    accept: Annotated[list[str] | None, typer.Option(
        "--accept", help="Accept a pre-flight warning, e.g. training_plan_az_adopted.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Show the plan only.")] = False,
    wait: Annotated[bool, typer.Option("--wait/--no-wait", help="Follow the steps live.")
                    ] = True,
    url: UrlOpt = URL, token: TokenOpt = "",
) -> None:
    """Create a cluster: only decisions are asked; the plan shows everything derived."""
    body = {"name": name, "region": region, "availability_zone": availability_zone,
            "instance_type": instance_type, "count": count, "capacity_type": capacity_type,
            "training_plan_arn": training_plan_arn,
            "deep_health_checks": not no_deep_health_checks, "override_warnings": accept or []}
    remote = Remote(url, token_of(token))
    if dry_run:
        out.print_json(json.dumps(remote.call("POST", "/api/v1/cluster-plans", json=body)))
        return
    result = remote.call("POST", "/api/v1/clusters", json=body)
    if result.get("changed") is False:
        out.print(f"cluster {name} already exists as asked: nothing to do")
        return
    out.print(f"creating {name}: about 25-40 minutes on AWS (operation {result['id']})")
    if wait:
        follow(remote, result)
    else:
        out.print(steps_table(result))


@cluster_app.command("list")
def list_clusters(url: UrlOpt = URL, token: TokenOpt = "") -> None:
    """Managed clusters, and EKS clusters in the account that podplane does not manage."""
    data = Remote(url, token_of(token)).call("GET", "/api/v1/clusters")
    table = Table("name", "origin", "state", "eks", "hyperpod", title="managed clusters")
    for c in data["managed"]:
        table.add_row(c["name"], c["origin"], c["state"], c["eks_cluster_name"],
                      c["hyperpod_cluster_name"] or "-")
    out.print(table)
    if data["unmanaged_eks"]:
        out.print("not managed (import with `podplane cluster import`): "
                  + ", ".join(data["unmanaged_eks"]))


@cluster_app.command("status")
def status(name: str, url: UrlOpt = URL, token: TokenOpt = "") -> None:
    """A cluster's state as the cloud reports it."""
    out.print_json(json.dumps(Remote(url, token_of(token)).call("GET",
                                                                 api("clusters", name))))


@cluster_app.command("import")
def import_cluster(name: str,
                   eks: Annotated[str | None, typer.Option("--eks", help="EKS cluster name.")
                                  ] = None,
                   hyperpod: Annotated[str | None, typer.Option("--hyperpod")] = None,
                   url: UrlOpt = URL, token: TokenOpt = "") -> None:
    """Import an existing EKS (+ HyperPod) cluster."""
    remote = Remote(url, token_of(token))
    follow(remote, remote.call("POST", "/api/v1/clusters/import", json={
        "name": name, "eks_cluster_name": eks, "hyperpod_cluster_name": hyperpod}))


@cluster_app.command("delete")
def delete(name: str, yes: Annotated[bool, typer.Option("--yes", help="Do not ask.")] = False,
           force: Annotated[bool, typer.Option("--force")] = False,
           url: UrlOpt = URL, token: TokenOpt = "") -> None:
    """Delete a cluster (imported ones are only detached)."""
    if not yes:
        typer.confirm(f"Delete cluster {name}?", abort=True)
    remote = Remote(url, token_of(token))
    follow(remote, remote.call("DELETE", api("clusters", name),
                               params={"force": str(force).lower(), "confirm": "true"}))
