"""The CLI's REST commands as a table, like the MCP tools (`mcp/tools.py`): each row is one REST
call. A row names the command, the method and path template, its parameters (each with its
typer declaration and where its value goes: a path segment, the query or the JSON body) and
how the answer is shown. `mount` turns the rows into typer commands, each with `--url` and
`--token`; command names and flags are the rows' own.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import typer
from rich.table import Table

from podplane.cli.remote import URL, Remote, TokenOpt, UrlOpt, api, out, token_or_env

Where = Literal["path", "query", "body", "local"]
REQUIRED = inspect.Parameter.empty


@dataclass(frozen=True)
class Arg:
    """One command-line parameter. `kind` is its typer declaration (Annotated[...]); `to` says
    where the value goes (`local`: only the command uses it); `key` is its REST name when it
    differs; `convert` maps the typed value to the wire value; None values are not sent."""

    name: str
    kind: Any
    default: Any = REQUIRED
    to: Where = "path"
    key: str | None = None
    convert: Callable[[Any], Any] | None = None


@dataclass(frozen=True)
class Call:
    """One run of a command: the values typed, and the client that sent the request."""

    values: dict[str, Any]
    remote: Remote
    url: str
    token: str


Show = Callable[[Any, Call], None]


def show_json(answer: Any, call: Call) -> None:
    out.print_json(json.dumps(answer))


def table(*columns: tuple[str, Callable[[dict[str, Any]], Any]], title: str | None = None,
          rows: Callable[[Any], Sequence[dict[str, Any]]] = lambda a: list(a)) -> Show:
    """A list answer as a table: one (header, cell) pair per column."""
    def show(answer: Any, call: Call) -> None:
        grid = Table(*(header for header, _ in columns), title=title)
        for row in rows(answer):
            grid.add_row(*(str(cell(row)) for _, cell in columns))
        out.print(grid)
    return show


@dataclass(frozen=True)
class Command:
    name: str
    method: str
    path: str  # below /api/v1, e.g. "clusters/{cluster}/nodes/{node}"
    help: str
    args: tuple[Arg, ...] = ()
    show: Show = show_json
    confirm: str | None = None  # asked unless --yes, e.g. "Delete cluster {name}?"
    dry_run_path: str | None = None  # --dry-run asks this path instead (a plan)
    extra: dict[str, Any] = field(default_factory=dict)  # fixed body fields

    def request(self, values: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
        """(method, path, httpx keyword arguments) for these values."""
        path = self.dry_run_path if self.dry_run_path and values.get("dry_run") else self.path
        segments = [values[s[1:-1]] if s.startswith("{") else s for s in path.split("/")]
        sent: dict[str, dict[str, Any]] = {"query": {}, "body": dict(self.extra)}
        for arg in self.args:
            if arg.to in sent:
                value = arg.convert(values[arg.name]) if arg.convert else values[arg.name]
                if value is not None:
                    sent[arg.to][arg.key or arg.name] = value
        kw: dict[str, Any] = {}
        if sent["query"]:
            kw["params"] = sent["query"]
        if self.extra or any(a.to == "body" for a in self.args):
            kw["json"] = sent["body"]
        return self.method, api(*segments), kw

    def run(self, values: dict[str, Any], url: str, token: str) -> None:
        if self.confirm and not values.get("yes"):
            typer.confirm(self.confirm.format(**values), abort=True)
        token = token_or_env(token)
        remote = Remote(url, token)
        method, path, kw = self.request(values)
        self.show(remote.call(method, path, **kw), Call(values, remote, url, token))

    def function(self) -> Callable[..., None]:
        """A typer callback whose signature is the rows' parameters plus --url and --token."""
        def callback(**values: Any) -> None:
            url, token = values.pop("url"), values.pop("token")
            self.run(values, url, token)

        params = [inspect.Parameter(a.name, inspect.Parameter.KEYWORD_ONLY, default=a.default,
                                    annotation=a.kind) for a in self.args]
        params += [inspect.Parameter("url", inspect.Parameter.KEYWORD_ONLY, default=URL,
                                     annotation=UrlOpt),
                   inspect.Parameter("token", inspect.Parameter.KEYWORD_ONLY, default="",
                                     annotation=TokenOpt)]
        callback.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
        callback.__annotations__ = {p.name: p.annotation for p in params}
        callback.__doc__ = self.help
        callback.__name__ = self.name.replace("-", "_")
        return callback


def mount(app: typer.Typer, commands: Sequence[Command]) -> typer.Typer:
    for command in commands:
        app.command(command.name)(command.function())
    return app
