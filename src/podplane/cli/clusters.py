"""`podplane cluster ...`: clusters over REST, one row per REST call (`cli/table.py`), with a
live step view for create, import and delete."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.table import Table

from podplane.cli.remote import follow, out, steps_table
from podplane.cli.table import Arg, Call, Command, mount, show_json

NAME = Arg("name", Annotated[str, typer.Argument()])


def show_created(answer: dict[str, Any], call: Call) -> None:
    name = call.values["name"]
    if call.values["dry_run"]:
        out.print_json(json.dumps(answer))
    elif answer.get("changed") is False:
        out.print(f"cluster {name} already exists as asked: nothing to do")
    else:
        out.print(f"creating {name}: about 25-40 minutes on AWS (operation {answer['id']})")
        if call.values["wait"]:
            follow(call.remote, answer)
        else:
            out.print(steps_table(answer))


def show_clusters(answer: dict[str, Any], call: Call) -> None:
    grid = Table("name", "origin", "state", "eks", "hyperpod", title="managed clusters")
    for c in answer["managed"]:
        grid.add_row(c["name"], c["origin"], c["state"], c["eks_cluster_name"],
                     c["hyperpod_cluster_name"] or "-")
    out.print(grid)
    if answer["unmanaged_eks"]:
        out.print("not managed (import with `podplane cluster import`): "
                  + ", ".join(answer["unmanaged_eks"]))


def show_followed(answer: dict[str, Any], call: Call) -> None:
    follow(call.remote, answer)


def show_imported(answer: dict[str, Any], call: Call) -> None:
    if answer.get("changed") is False:
        out.print(f"cluster {call.values['name']} was imported already as asked: nothing to do")
    else:
        follow(call.remote, answer)


CREATE = (
    Arg("name", Annotated[str, typer.Argument()], to="body"),
    Arg("availability_zone", Annotated[str, typer.Option("--az",
                                                         help="AZ for the GPU nodes.")],
        to="body"),
    Arg("instance_type", Annotated[str, typer.Option("--type", help="e.g. ml.p5.48xlarge")],
        to="body"),
    Arg("count", Annotated[int, typer.Option("--count", min=1)], to="body"),
    Arg("capacity_type", Annotated[str, typer.Option(
        "--capacity", help="on-demand | spot | training-plan")], "on-demand", to="body"),
    Arg("training_plan_arn", Annotated[str | None, typer.Option("--training-plan")], None,
        to="body"),
    Arg("region", Annotated[str, typer.Option("--region")], "us-west-2", to="body"),
    Arg("no_deep_health_checks", Annotated[bool, typer.Option("--no-deep-health-checks")],
        False, to="body", key="deep_health_checks", convert=lambda off: not off),
    Arg("accept", Annotated[list[str] | None, typer.Option(
        "--accept", help="Accept a pre-flight warning, e.g. training_plan_az_adopted.")], None,
        to="body", key="override_warnings", convert=lambda codes: codes or []),
    Arg("dry_run", Annotated[bool, typer.Option("--dry-run", help="Show the plan only.")],
        False, to="local"),
    Arg("wait", Annotated[bool, typer.Option("--wait/--no-wait",
                                             help="Follow the steps live.")], True,
        to="local"),
)

COMMANDS = (
    Command("create", "POST", "clusters",
            "Create a cluster: only decisions are asked; the plan shows everything derived.",
            CREATE, show=show_created, dry_run_path="cluster-plans"),
    Command("list", "GET", "clusters",
            "Managed clusters, and EKS clusters in the account that podplane does not manage.",
            show=show_clusters),
    Command("status", "GET", "clusters/{name}", "A cluster's state as the cloud reports it.",
            (NAME,), show=show_json),
    Command("import", "POST", "clusters/import", "Import an existing EKS (+ HyperPod) cluster.",
            (Arg("name", Annotated[str, typer.Argument()], to="body"),
             Arg("eks", Annotated[str | None, typer.Option("--eks", help="EKS cluster name.")],
                 None, to="body", key="eks_cluster_name"),
             Arg("hyperpod", Annotated[str | None, typer.Option("--hyperpod")], None,
                 to="body", key="hyperpod_cluster_name")),
            show=show_imported),
    Command("delete", "DELETE", "clusters/{name}",
            "Delete a cluster (imported ones are only detached).",
            # Asked here unless --yes; the server then needs confirm=true (a destroy).
            (NAME, Arg("yes", Annotated[bool, typer.Option("--yes", help="Do not ask.")], False,
                       to="query", key="confirm", convert=lambda _: "true"),
             Arg("force", Annotated[bool, typer.Option("--force")], False, to="query",
                 convert=lambda f: str(f).lower())),
            show=show_followed, confirm="Delete cluster {name}?"),
)

cluster_app = mount(typer.Typer(no_args_is_help=True, help="Create, inspect, import and delete "
                                "clusters (EKS + HyperPod)."), COMMANDS)
