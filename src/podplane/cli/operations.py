"""`podplane operation ...`: watch and steer durable operations (rows of REST calls)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from podplane.cli.remote import follow, out, steps_table
from podplane.cli.table import Arg, Call, Command, mount, table

OpId = Arg("op_id", Annotated[str, typer.Argument()])


def show_steps(answer: Any, call: Call) -> None:
    out.print(steps_table(answer))


def show_followed(answer: Any, call: Call) -> None:
    follow(call.remote, answer)


COMMANDS = (
    Command("list", "GET", "operations", "List recent operations.",
            (Arg("status", Annotated[str | None, typer.Option(help="Filter by status.")], None,
                 to="query"),),
            show=table(("id", lambda o: o["id"]), ("kind", lambda o: o["kind"]),
                       ("target", lambda o: o["target"]), ("status", lambda o: o["status"]),
                       ("updated", lambda o: o["updated_at"]),
                       rows=lambda a: a.get("items", a) if isinstance(a, dict) else a)),
    Command("get", "GET", "operations/{op_id}", "Show one operation with its steps.", (OpId,),
            show=show_steps),
    Command("wait", "GET", "operations/{op_id}",
            "Follow an operation live until it ends; exit 1 unless it succeeded.", (OpId,),
            show=show_followed),
    Command("retry", "POST", "operations/{op_id}/steps/{step}/retry",
            "Re-run one failed step of an operation (and the steps after it).",
            (OpId, Arg("step", Annotated[str, typer.Argument()])), show=show_steps),
    Command("cancel", "POST", "operations/{op_id}/cancel",
            "Ask a running operation to stop at its next safe point.", (OpId,),
            show=show_steps),
)

operation_app = mount(typer.Typer(no_args_is_help=True,
                                  help="Watch and steer durable operations."), COMMANDS)
