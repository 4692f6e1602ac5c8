"""`podplane group ...` and `podplane node ...`: instance groups and nodes over REST, one row
per REST call (`cli/table.py`)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from podplane.cli.remote import out, steps_table, wait_op
from podplane.cli.table import Arg, Call, Command, mount, show_json, table
from podplane.domain.instance_groups import CapacityType

CLUSTER = Arg("cluster", Annotated[str, typer.Argument(help="The managed cluster.")])
GROUP = Arg("group", Annotated[str, typer.Argument(help="The instance group.")])
NODE = Arg("node", Annotated[str, typer.Argument(
    help="Instance id (i-...) or Node name (hyperpod-i-...).")])
WAIT = Arg("wait", Annotated[bool, typer.Option("--wait/--no-wait",
                                                help="Follow the operation live.")], True,
           to="local")
YES = Arg("yes", Annotated[bool, typer.Option("--yes", help="Confirm a destructive change.")],
          False, to="query", key="confirm")
DRY_RUN = Annotated[bool, typer.Option("--dry-run", help="Show the plan; change nothing.")]
DRY_QUERY = Arg("dry_run", DRY_RUN, False, to="query")
DRY_BODY = Arg("dry_run", DRY_RUN, False, to="body")


def show_change(answer: dict[str, Any], call: Call) -> None:
    """An operation (followed live with --wait), or the plan / 'no change'."""
    plan = answer.get("plan") or {}
    for note in plan.get("notes", []):
        out.print(f"[cyan]note[/] {note}")
    if plan.get("warning"):
        out.print(f"[yellow]warning[/] {plan['warning']}")
    if "id" not in answer:
        if answer.get("dry_run"):
            out.print_json(data=plan)
        else:  # a create repeated says what made it already (issue 31)
            out.print(plan.get("note") or "no change needed")
        return
    if call.values["wait"]:
        wait_op(answer["id"], call.url, call.token)
    else:
        out.print(steps_table(answer))
        out.print(f"follow it: podplane operation wait {answer['id']}")


GROUPS = "clusters/{cluster}/instance-groups"
NODES = "clusters/{cluster}/nodes"

GROUP_COMMANDS = (
    Command("list", "GET", GROUPS, "List instance groups as HyperPod reports them.", (CLUSTER,),
            show=table(("name", lambda g: g["name"]), ("type", lambda g: g["instance_type"]),
                       ("capacity", lambda g: g["capacity_type"]),
                       ("efa-only", lambda g: "yes" if g["efa_only"] else ""),
                       ("status", lambda g: g["status"]),
                       ("current/target",
                        lambda g: f"{g['current_count']}/{g['target_count']}"))),
    Command("add", "POST", GROUPS,
            "Add an instance group (subnet, lifecycle scripts and role are derived).", (
                CLUSTER, Arg("name", Annotated[str, typer.Argument(help="New group name.")],
                             to="body"),
                Arg("instance_type", Annotated[str, typer.Option(
                    "--type", help="e.g. ml.g5.8xlarge")], to="body"),
                Arg("count", Annotated[int, typer.Option("--count", min=1)], to="body"),
                Arg("az", Annotated[str | None, typer.Option(
                    "--az", help="AZ (a training plan's wins).")], None, to="body",
                    key="availability_zone"),
                Arg("capacity", Annotated[CapacityType, typer.Option("--capacity")],
                    CapacityType.ON_DEMAND, to="body", key="capacity_type",
                    convert=lambda c: c.value),
                Arg("plan_arn", Annotated[str | None, typer.Option("--training-plan")], None,
                    to="body", key="training_plan_arn"),
                Arg("efa_only", Annotated[bool, typer.Option("--efa-only")], False, to="body"),
                Arg("ebs_gb", Annotated[int, typer.Option("--ebs-gb")], 500, to="body"),
                Arg("subnet", Annotated[str | None, typer.Option("--subnet")], None, to="body",
                    key="subnet_id"),
                Arg("new_subnet", Annotated[bool, typer.Option("--new-subnet")], False,
                    to="body"),
                DRY_BODY, WAIT), show=show_change),
    Command("scale", "PATCH", GROUPS + "/{group}",
            "Scale a group (0 allowed); scaling down terminates nodes (admin, needs --yes).", (
        CLUSTER, GROUP,
        Arg("count", Annotated[int, typer.Argument(min=0, help="New node count.")], to="body"),
        Arg("yes", YES.kind, False, to="body", key="confirm"),
        DRY_BODY, WAIT), show=show_change),
    Command("delete", "DELETE", GROUPS + "/{group}",
            "Delete a group and terminate its nodes (needs --yes).",
            (CLUSTER, GROUP, YES, DRY_QUERY, WAIT), show=show_change),
)

NODE_COMMANDS = (
    Command("list", "GET", NODES,
            "Nodes with health from HyperPod and Kubernetes, GPUs, and the suggested next step.",
            (CLUSTER, Arg("group", Annotated[str | None, typer.Option("--group")], None,
                          to="query", key="instance_group")),
            show=table(("node", lambda n: n["id"]), ("group", lambda n: n["instance_group"]),
                       ("type", lambda n: n["instance_type"]),
                       ("status", lambda n: n["health"]["instance_status"]),
                       ("health", lambda n: n["health"]["state"]),
                       ("fault", lambda n: n["health"]["fault_type"] or ""),
                       ("gpus", lambda n: f"{n['gpus']['allocated']}/"
                                          f"{n['gpus']['allocatable']}"),
                       ("next step", lambda n: n["health"]["suggested_action"] or ""))),
    Command("describe", "GET", NODES + "/{node}",
            "One node in full (JSON), including the escalation investigate -> reboot -> "
            "replace.", (CLUSTER, NODE), show=show_json),
    Command("reboot", "POST", NODES + "/{node}/reboot",
            "Reboot a Running node (keeps instance storage).",
            (CLUSTER, NODE, DRY_QUERY, WAIT), show=show_change),
    Command("replace", "POST", NODES + "/{node}/replace",
            "Replace a node with a new instance (needs --yes; instance storage is lost).",
            (CLUSTER, NODE, YES, DRY_QUERY, WAIT), show=show_change),
    Command("delete", "DELETE", NODES + "/{node}",
            "Terminate a node; its group shrinks by one (needs --yes).",
            (CLUSTER, NODE, YES, DRY_QUERY, WAIT), show=show_change),
)

group_app = mount(typer.Typer(no_args_is_help=True,
                              help="Add, scale and delete instance groups."), GROUP_COMMANDS)
node_app = mount(typer.Typer(no_args_is_help=True,
                             help="Node health; reboot, replace, delete (investigate first)."),
                 NODE_COMMANDS)


def install(app: typer.Typer) -> None:
    app.add_typer(group_app, name="group")
    app.add_typer(node_app, name="node")
