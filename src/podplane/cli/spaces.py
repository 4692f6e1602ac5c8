"""`podplane space ...`: dev spaces over REST, one row per REST call (`cli/table.py`)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from podplane.cli.endpoints import show_logs
from podplane.cli.groups import CLUSTER, DRY_BODY, DRY_QUERY, WAIT, YES, show_change
from podplane.cli.remote import out
from podplane.cli.table import Arg, Call, Command, mount, table

NAME = Arg("name", Annotated[str, typer.Argument(help="The space's name.")])
SPACES = "clusters/{cluster}/spaces"


def show_space(s: dict[str, Any], call: Call) -> None:
    out.print(f"{s['name']} ({s['app']}): [bold]{s['state']}[/]  cpu {s['cpu']}, memory "
              f"{s['memory']}, {s['gpus']} GPU, home {s['storage']}"
              + (f", group {s['instance_group']}" if s["instance_group"] else ""))
    if s["message"]:
        out.print(f"[dim]{s['message']}[/]")
    out.print("mounts: " + ", ".join(f"{m['path']} ({m['source']})" for m in s["mounts"]))
    out.print(f"console: {s['console_path']}")
    table(("pod", lambda p: p["name"]), ("phase", lambda p: p["phase"]),
          ("node", lambda p: p["node"] or ""), ("ready", lambda p: "yes" if p["ready"] else ""),
          rows=lambda a: a["pods"])(s, call)


def _state(desired: str) -> Command:
    verb = "start" if desired == "Running" else "stop"
    return Command(verb, "PATCH", SPACES + "/{name}",
                   "Start the space." if verb == "start" else
                   "Stop the space (its home volume is kept).",
                   (CLUSTER, NAME, Arg("desired", Annotated[str, typer.Option(
                       hidden=True)], desired, to="body"), DRY_BODY, WAIT), show=show_change)


COMMANDS = (
    Command("list", "GET", SPACES, "Spaces (also those made with hyp) and their state.",
            (CLUSTER,), show=table(
                ("space", lambda s: s["name"]), ("state", lambda s: s["state"]),
                ("cpu", lambda s: s["cpu"]), ("memory", lambda s: s["memory"]),
                ("gpus", lambda s: s["gpus"]), ("made by", lambda s: s["made_by"]))),
    Command("create", "POST", SPACES,
            "A JupyterLab with a home volume and the bucket at /data, /models, /outputs.", (
                CLUSTER, Arg("name", NAME.kind, to="body"),
                Arg("group", Annotated[str | None, typer.Option("--group", help=(
                    "Instance group (required with --gpus)."))], None, to="body",
                    key="instance_group"),
                Arg("cpu", Annotated[str, typer.Option("--cpu")], "1", to="body"),
                Arg("memory", Annotated[str, typer.Option("--memory")], "4Gi", to="body"),
                Arg("gpus", Annotated[int, typer.Option("--gpus", min=0)], 0, to="body"),
                Arg("storage", Annotated[int, typer.Option("--storage-gib", min=1)], 20,
                    to="body", key="storage_gib"),
                Arg("idle", Annotated[int, typer.Option("--idle-minutes", min=0, help=(
                    "Stop after this long idle; 0 never."))], 60, to="body",
                    key="idle_minutes"),
                DRY_BODY, WAIT), show=show_change),
    Command("get", "GET", SPACES + "/{name}", "A space with its mounts and pods.",
            (CLUSTER, NAME), show=show_space),
    _state("Running"), _state("Stopped"),
    Command("delete", "DELETE", SPACES + "/{name}",
            "Delete the space's server; --delete-home also its home (admin, --yes).", (
                CLUSTER, NAME,
                Arg("delete_home", Annotated[bool, typer.Option("--delete-home")], False,
                    to="query", convert=lambda given: given or None),
                YES, DRY_QUERY, WAIT), show=show_change),
    Command("files", "GET", SPACES + "/{name}/files",
            "A directory as the running space sees it.", (
                CLUSTER, NAME,
                Arg("path", Annotated[str, typer.Argument(help="e.g. data")], "", to="query")),
            show=table(("name", lambda f: f["name"]), ("type", lambda f: f["type"]),
                       ("size", lambda f: f["size"] if f["size"] is not None else ""),
                       rows=lambda a: a["entries"])),
    Command("open", "POST", SPACES + "/{name}/open",
            "A link that opens JupyterLab in the browser (once, within a minute).",
            (CLUSTER, NAME), show=lambda o, call: out.print(o["url"], soft_wrap=True,
                                                            highlight=False)),
    Command("logs", "GET", SPACES + "/{name}/logs", "The space server's logs, one page.", (
        CLUSTER, NAME,
        Arg("tail", Annotated[int | None, typer.Option("--tail", min=1)], None, to="query"),
        Arg("cursor", Annotated[int, typer.Option("--cursor", min=0)], 0, to="query")),
        show=show_logs),
)


def install(app: typer.Typer) -> None:
    app.add_typer(mount(typer.Typer(no_args_is_help=True, help="Dev spaces: notebooks next "
                                    "to the cluster's data."), COMMANDS), name="space")
