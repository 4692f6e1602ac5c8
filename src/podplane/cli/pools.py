"""`podplane pool ...`: warm pools over REST, one row per REST call (`cli/table.py`)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from podplane.cli.groups import CLUSTER, DRY_BODY, DRY_QUERY, WAIT, YES, show_change
from podplane.cli.remote import out
from podplane.cli.table import Arg, Call, Command, mount, table

NAME = Arg("name", Annotated[str, typer.Argument(help="The pool's name.")])
POOLS = "clusters/{cluster}/pools"


def show_pool(p: dict[str, Any], call: Call) -> None:
    out.print(f"{p['name']} ({p['engine']}, {p['model']}): {p['ready']}/{p['replicas']} "
              f"ready, {p['free']} free, serving {', '.join(p['assigned']) or 'nothing'}")
    table(("pod", lambda x: x["name"]), ("node", lambda x: x["node"] or ""),
          ("ready", lambda x: "yes" if x["ready"] else ""),
          ("endpoint", lambda x: x["assigned"] or (f"draining {x['draining']}"
                                                   if x["draining"] else "")),
          rows=lambda a: a["pods"])(p, call)


COMMANDS = (
    Command("list", "GET", POOLS, "Warm pools with free and assigned pods.", (CLUSTER,),
            show=table(("pool", lambda p: p["name"]), ("model", lambda p: p["model"]),
                       ("ready", lambda p: f"{p['ready']}/{p['replicas']}"),
                       ("free", lambda p: p["free"]),
                       ("endpoints", lambda p: ", ".join(p["assigned"])))),
    Command("create", "POST", POOLS, "Start warm engine pods of one model.", (
        CLUSTER, Arg("name", NAME.kind, to="body"),
        Arg("group", Annotated[str, typer.Option("--group", help="Instance group.")],
            to="body", key="instance_group"),
        Arg("model", Annotated[str, typer.Option("--model", help="s3:// or a HF id.")],
            to="body"),
        Arg("engine", Annotated[str, typer.Option("--engine")], "vllm", to="body"),
        Arg("tp", Annotated[int, typer.Option("--tp", min=1)], 1, to="body",
            key="tensor_parallel"),
        Arg("replicas", Annotated[int, typer.Option("--replicas", min=1)], 1, to="body"),
        DRY_BODY, WAIT), show=show_change),
    Command("get", "GET", POOLS + "/{name}", "A pool with each pod's endpoint.",
            (CLUSTER, NAME), show=show_pool),
    Command("scale", "PATCH", POOLS + "/{name}",
            "Set the pods; scale-in removes free pods only.", (
                CLUSTER, NAME,
                Arg("replicas", Annotated[int, typer.Argument(min=0, help="Pods wanted.")],
                    to="body"), DRY_BODY, WAIT), show=show_change),
    Command("assign", "POST", POOLS + "/{name}/assign",
            "Give an endpoint pods of the pool (0 drains and removes it: needs --yes).", (
                CLUSTER, NAME,
                Arg("endpoint", Annotated[str, typer.Argument(help="Endpoint name.")],
                    to="body"),
                Arg("pods", Annotated[int, typer.Option("--pods", min=0)], 1, to="body"),
                Arg("yes", YES.kind, False, to="body", key="confirm"),
                DRY_BODY, WAIT), show=show_change),
    Command("delete", "DELETE", POOLS + "/{name}", "Delete the pool (needs --yes).",
            (CLUSTER, NAME, YES, DRY_QUERY, WAIT), show=show_change),
)


def install(app: typer.Typer) -> None:
    app.add_typer(mount(typer.Typer(no_args_is_help=True, help="Warm GPU worker pools."),
                        COMMANDS), name="pool")
