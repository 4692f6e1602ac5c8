"""The `podplane` command."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from podplane.cli import cluster_reconcile  # noqa: F401  (registers `cluster reconcile`)
from podplane.cli.agent import agent_app
from podplane.cli.clusters import cluster_app
from podplane.cli.deploy import deploy_app
from podplane.cli.diagnose import install as install_diagnose_commands
from podplane.cli.doctor import doctor as doctor_command
from podplane.cli.endpoints import install as install_endpoint_commands
from podplane.cli.features import install as install_feature_commands
from podplane.cli.groups import install as install_group_commands
from podplane.cli.jobs import install as install_job_commands
from podplane.cli.models import install as install_model_commands
from podplane.cli.operations import operation_app
from podplane.cli.pools import install as install_pool_commands
from podplane.cli.spaces import install as install_space_commands
from podplane.domain.effects import Role
from podplane.domain.errors import InvalidInput, PodplaneError
from podplane.mcp.cli import mcp as mcp_command
from podplane.settings import Settings

T = TypeVar("T")


def _install_sandbox_command(app: typer.Typer) -> None:
    """`podplane sandbox` comes from the podplane-sandbox package when it is installed (a
    development companion; production installs do not carry it)."""
    try:
        from podplane_sandbox.cli import sandbox
    except ImportError:
        def sandbox() -> None:
            """Run the sandbox cloud (needs the podplane-sandbox package)."""
            Console(stderr=True).print(SANDBOX_MISSING)
            raise typer.Exit(1) from None
    app.command("sandbox")(sandbox)


SANDBOX_MISSING = ("the sandbox cloud is a separate package: `pip install ./sandbox` from a "
                   "podplane checkout (`make up` does it), or set PODPLANE_BACKEND=aws.")

app = typer.Typer(no_args_is_help=True, add_completion=False,
                  help="Control plane for GPU clusters on AWS (EKS + SageMaker HyperPod).")
token_app = typer.Typer(no_args_is_help=True, help="Create, list and revoke API tokens.")
app.add_typer(token_app, name="token")
app.add_typer(operation_app, name="operation")
app.add_typer(cluster_app, name="cluster")
install_group_commands(app)  # podplane group ..., podplane node ...
install_job_commands(app)  # podplane job ...
install_feature_commands(app)  # podplane feature ...
install_diagnose_commands(app)  # podplane diagnose ...
install_endpoint_commands(app)  # podplane endpoint ...
install_space_commands(app)  # podplane space ...
install_pool_commands(app)  # podplane pool ...
install_model_commands(app)  # podplane model ...
app.command("mcp")(mcp_command)
_install_sandbox_command(app)
app.command("doctor")(doctor_command)
app.add_typer(deploy_app, name="deploy")  # podplane deploy print-ssm-command
app.add_typer(agent_app, name="agent")  # podplane agent install kiro|claude-code
out = Console()
err = Console(stderr=True)

HostOpt = Annotated[str | None, typer.Option("--host", help="Bind address (PODPLANE_HOST).")]
PortOpt = Annotated[int | None, typer.Option("--port", help="Port (PODPLANE_PORT).")]
HomeOpt = Annotated[Path | None, typer.Option("--home", help="State folder (PODPLANE_HOME).")]


def _settings(
    host: str | None = None, port: int | None = None, home: Path | None = None
) -> Settings:
    given: dict[str, Any] = {"host": host, "port": port, "home": home}
    try:
        return Settings(**{k: v for k, v in given.items() if v is not None})
    except ValidationError as e:  # a bad PODPLANE_* variable: name it, no traceback
        first = e.errors()[0]
        name = f"PODPLANE_{str(first['loc'][0]).upper()}"
        raise InvalidInput(f"{name}: {first['msg']}",
                           hint="Fix or unset it (README, \"Configuration\").") from None


@app.command()
def serve(host: HostOpt = None, port: PortOpt = None, home: HomeOpt = None) -> None:
    """Run the control plane only (console, REST, WebSocket, MCP on one port)."""
    from podplane import server

    _guarded(lambda: server.run(_settings(host, port, home)))


@app.command()
def up(host: HostOpt = None, port: PortOpt = None, home: HomeOpt = None) -> None:
    """Start the sandbox cloud (unless PODPLANE_BACKEND=aws) and the control plane."""
    from podplane import server

    _guarded(lambda: server.run(_settings(host, port, home), with_sandbox=True))


@token_app.command("create")
def token_create(
    name: Annotated[str, typer.Option("--name", help="A name for the token's holder.")],
    role: Annotated[Role, typer.Option("--role", help="viewer | operator | admin")] = Role.VIEWER,
    home: HomeOpt = None,
) -> None:
    """Create a token on PODPLANE_HOME's database and print the token alone."""
    from podplane.server import local_ctx
    from podplane.services.access import tokens

    async def go() -> str:
        async with local_ctx(_settings(home=home)) as ctx:
            return (await tokens.create_token(ctx, name, role)).secret

    typer.echo(_run(go()))


@token_app.command("list")
def token_list(home: HomeOpt = None) -> None:
    """List tokens (never their secrets)."""
    from podplane.server import local_ctx
    from podplane.services.access import tokens

    async def go() -> list[tokens.TokenInfo]:
        async with local_ctx(_settings(home=home)) as ctx:
            return await tokens.list_tokens(ctx)

    table = Table("name", "role", "created", "last used", "revoked")
    for t in _run(go()):
        table.add_row(t.name, t.role, f"{t.created_at:%Y-%m-%d %H:%M}",
                      f"{t.last_used_at:%Y-%m-%d %H:%M}" if t.last_used_at else "-",
                      "yes" if t.revoked else "")
    out.print(table)


@token_app.command("revoke")
def token_revoke(name: Annotated[str, typer.Argument()], home: HomeOpt = None) -> None:
    """Revoke a token by name; its console sessions end too."""
    from podplane.server import local_ctx
    from podplane.services.access import tokens

    async def go() -> None:
        async with local_ctx(_settings(home=home)) as ctx:
            await tokens.revoke_token(ctx, name)

    _run(go())
    out.print(f"revoked {name}")


def _run(coro: Coroutine[Any, Any, T]) -> T:
    return _guarded(lambda: asyncio.run(coro))


def _guarded(action: Callable[[], T]) -> T:
    """Run `action`; a classified error becomes its message and hint, exit status 1."""
    try:
        return action()
    except PodplaneError as e:
        err.print(f"[red]error[/red] ({e.code}): {e.message}")
        if e.hint:
            err.print(f"hint: {e.hint}")
        raise typer.Exit(1) from None
