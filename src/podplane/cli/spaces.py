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
                Arg("template", Annotated[str | None, typer.Option("--template", help=(
                    "Its defaults fill what is not given; its bounds apply."))], None,
                    to="body"),
                Arg("image", Annotated[str | None, typer.Option("--image")], None, to="body"),
                # unset: the template's default, else 1 CPU, 4Gi, 20 GiB, 60 minutes
                Arg("cpu", Annotated[str | None, typer.Option("--cpu")], None, to="body"),
                Arg("memory", Annotated[str | None, typer.Option("--memory")], None,
                    to="body"),
                Arg("gpus", Annotated[int, typer.Option("--gpus", min=0)], 0, to="body"),
                Arg("storage", Annotated[int | None, typer.Option("--storage-gib", min=1)],
                    None, to="body", key="storage_gib"),
                Arg("idle", Annotated[int | None, typer.Option("--idle-minutes", min=0, help=(
                    "Stop after this long idle; 0 never."))], None, to="body",
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


TEMPLATES = "clusters/{cluster}/space-templates"
TEMPLATE = Arg("name", Annotated[str, typer.Argument(help="The template's name.")])


def _maybe(kind: Any, flag: str, key: str, help_text: str | None = None) -> Arg:
    """An optional template field: unset, the server's default is kept."""
    return Arg(key, Annotated[kind | None, typer.Option(flag, help=help_text)], None,
               to="body")


TEMPLATE_COMMANDS = (
    Command("list", "GET", TEMPLATES, "Space templates (also those made with hyp).",
            (CLUSTER,), show=table(
                ("template", lambda t: t["name"]), ("default image", lambda t: (
                    t["images"] or ["any"])[0]),
                ("cpu", lambda t: f"{t['cpu'] or '-'} (max {t['max_cpu'] or '-'})"),
                ("memory", lambda t: f"{t['memory'] or '-'} (max {t['max_memory'] or '-'})"),
                ("gpus max", lambda t: t["max_gpus"] if t["max_gpus"] is not None else "-"),
                ("made by", lambda t: t["made_by"]))),
    Command("set", "PUT", TEMPLATES + "/{name}",
            "Create or update a template as given (admin); unset fields take the defaults.", (
                CLUSTER, TEMPLATE,
                Arg("images", Annotated[list[str] | None, typer.Option(
                    "--image", help="Allowed image (repeat); the first is the default.")],
                    None, to="body"),
                _maybe(str, "--cpu", "cpu"), _maybe(str, "--max-cpu", "max_cpu"),
                _maybe(str, "--memory", "memory"), _maybe(str, "--max-memory", "max_memory"),
                _maybe(int, "--max-gpus", "max_gpus"),
                _maybe(int, "--storage-gib", "storage_gib"),
                _maybe(int, "--max-storage-gib", "max_storage_gib"),
                _maybe(int, "--idle-minutes", "idle_minutes", "0 never."),
                DRY_BODY), show=show_change),
    Command("delete", "DELETE", TEMPLATES + "/{name}",
            "Delete a template (admin); refused while spaces use it.",
            (CLUSTER, TEMPLATE, DRY_QUERY), show=show_change),
)


def install(app: typer.Typer) -> None:
    space = mount(typer.Typer(no_args_is_help=True, help="Dev spaces: notebooks next to the "
                              "cluster's data."), COMMANDS)
    space.add_typer(mount(typer.Typer(no_args_is_help=True, help="Templates an admin "
                                      "defines and spaces pick from."), TEMPLATE_COMMANDS),
                    name="template")
    app.add_typer(space, name="space")
