"""`podplane diagnose node|operation|job|endpoint`: read-only diagnoses over REST, shown as a
verdict (conclusion, findings with evidence, the suggested next call). Exit 1 when something fails.
`podplane diagnose nccl` runs the NCCL all-reduce test (an operation; operator role)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.table import Table

from podplane.cli.remote import api, follow, out
from podplane.cli.table import Arg, Call, Command, mount

STYLE = {"ok": "green", "warn": "yellow", "fail": "red"}
CLUSTER = Arg("cluster", Annotated[str, typer.Argument(help="The managed cluster.")])
NODE = Arg("node", Annotated[str, typer.Argument(help="Instance id (i-...) or Node name.")])
JOB = Arg("job", Annotated[str, typer.Argument(help="The job's name.")])
OPERATION = Arg("op_id", Annotated[str, typer.Argument(help="The operation's id (op-...).")])
ENDPOINT = Arg("name", Annotated[str, typer.Argument(help="The endpoint's name.")])
NODES = Arg("nodes", Annotated[str, typer.Option(help="Comma-separated nodes (2-16, one GPU "
                                                 "type): instance ids or Node names.")],
            to="body", convert=lambda text: [n.strip() for n in text.split(",") if n.strip()])
WAIT = Arg("wait", Annotated[bool, typer.Option("--wait/--no-wait", help="Follow the test and "
                                                "show its verdict.")], False, to="local")
NCCL = "clusters/{cluster}/diagnostics/nccl"


def show_verdict(verdict: dict[str, Any], call: Call) -> None:
    status = verdict["status"]
    grid = Table("finding", "status", "detail", "evidence", "fix",
                 title=f"{verdict['target']}: [{STYLE[status]}]{verdict['conclusion']}[/]")
    for f in verdict["findings"]:
        proof = "\n".join(f"{e['source']}: {e['detail']}" for e in f["evidence"])
        grid.add_row(f["check"], f"[{STYLE[f['status']]}]{f['status']}[/]", f["detail"], proof,
                     f["fix"])
    out.print(grid)
    for note in verdict["notes"]:
        out.print(note)
    if (step := verdict["next"]) is not None:
        args = " ".join(f"{k}={v}" for k, v in step["arguments"].items())
        ask = " (changes something: confirm first)" if step["mutates"] else ""
        out.print(f"next: {step['tool']} {args}{ask}\n  cost: {step['cost']}")
    if status == "fail":
        raise typer.Exit(1)


def show_nccl(answer: dict[str, Any], call: Call) -> None:
    """The started test; with --wait, followed to its end and its verdict shown."""
    if not call.values["wait"]:
        out.print(f"NCCL test started: podplane operation wait {answer['id']}, then "
                  f"podplane diagnose nccl-result {call.values['cluster']} {answer['id']}")
        return
    follow(call.remote, answer)
    show_nccl_result(call.remote.call("GET", api("clusters", call.values["cluster"],
                                                 "diagnostics", "nccl", answer["id"])), call)


def show_nccl_result(result: dict[str, Any], call: Call) -> None:
    if result["verdict"] is None:
        out.print(f"operation {result['operation_id']} is {result['status']}: no verdict yet")
        return
    show_verdict(result["verdict"], call)


COMMANDS = (
    Command("node", "GET", "clusters/{cluster}/diagnostics/nodes/{node}",
            "Diagnose a node: HyperPod status, health labels, events; the next rung of "
            "investigate -> reboot -> replace.", (CLUSTER, NODE), show=show_verdict),
    Command("operation", "GET", "operations/{op_id}/diagnosis",
            "Why an operation failed or waits: the step, its cause, the exact retry.",
            (OPERATION,), show=show_verdict),
    Command("job", "GET", "clusters/{cluster}/diagnostics/jobs/{job}",
            "Why a training job failed or waits: pods, exit codes, images, nodes.",
            (CLUSTER, JOB), show=show_verdict),
    Command("endpoint", "GET", "clusters/{cluster}/diagnostics/endpoints/{name}",
            "Why an inference endpoint does not serve: pulls, crashes, GPUs, readiness.",
            (CLUSTER, ENDPOINT), show=show_verdict),
    Command("nccl", "POST", NCCL, "Run an NCCL all-reduce test across nodes (a short job, "
            "deleted after): bus bandwidth against the type's figure, the slow node.",
            (CLUSTER, NODES, WAIT), show=show_nccl),
    Command("nccl-result", "GET", NCCL + "/{op_id}", "An NCCL test's verdict and figures.",
            (CLUSTER, OPERATION), show=show_nccl_result),
)

diagnose_app = mount(typer.Typer(no_args_is_help=True,
                                 help="Diagnoses with a suggested next step (nccl runs a "
                                 "short test job)."),
                     COMMANDS)


def install(app: typer.Typer) -> None:
    app.add_typer(diagnose_app, name="diagnose")
