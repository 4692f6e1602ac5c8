"""`podplane sandbox`: run the simulated cloud in its own process (registered in podplane.cli)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer


def sandbox(
    aws_port: Annotated[int, typer.Option("--aws-port", help="AWS endpoint port.")] = 4566,
    kube_port: Annotated[int, typer.Option("--kube-port", help="First Kubernetes API port: "
                                           "each EKS cluster gets its own API server on the "
                                           "first free port from this one up.")] = 6443,
    speed: Annotated[float, typer.Option("--speed", help="Virtual seconds per real second "
                                         "(0 freezes the clock).")] = 60.0,
    seed: Annotated[int, typer.Option("--seed", help="Seed for reproducible runs.")] = 0,
    print_env: Annotated[bool, typer.Option("--print-env", help="Print the export lines for "
                                            "the AWS CLI and kubectl, then exit.")] = False,
    lag: Annotated[bool, typer.Option("--lag/--no-lag", help="AWS's eventual consistency and "
                                      "slow deletes (IAM propagation, NAT deletion).")] = True,
    host: Annotated[str, typer.Option("--host", help="Bind address.")] = "127.0.0.1",
    home: Annotated[Path | None, typer.Option("--home", help="State folder "
                                              "(PODPLANE_HOME).")] = None,
) -> None:
    """Run the sandbox cloud only: AWS endpoint (EKS, HyperPod, EC2, IAM, S3, STS) and the
    Kubernetes API."""
    from podplane.settings import Settings
    from podplane_sandbox.kube import start_kube_api
    from podplane_sandbox.main import Sandbox

    root = home or Settings().home
    box = Sandbox(root, host=host, aws_port=aws_port, kube_port=kube_port, speed=speed,
                  seed=seed, kube_factory=start_kube_api, lag=lag)
    if print_env:
        box.write_env()  # keeps the printed secret: the next start adopts it
        typer.echo("\n".join(box.env_lines()))
        return
    typer.echo(f"sandbox AWS endpoint http://{host}:{aws_port}  "
               f"(env: {box.folder / 'env'}; speed {speed}x, seed {seed})")
    try:
        asyncio.run(box.serve())
    except OSError as e:  # typically: the port is taken (another sandbox already runs)
        typer.echo(f"error: cannot serve the sandbox on {host}:{aws_port}: {e.strerror or e}",
                   err=True)
        raise typer.Exit(1) from None



def main() -> None:
    """`podplane-sandbox`: the same command without podplane's CLI around it."""
    typer.run(sandbox)
