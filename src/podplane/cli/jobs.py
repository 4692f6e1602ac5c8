"""`podplane job ...`: training jobs over REST (recipes, submit, list, get, logs [-f],
events, cancel, delete)."""

from __future__ import annotations

import time
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from podplane.cli.groups import show_change
from podplane.cli.remote import URL, Remote, TokenOpt, UrlOpt, api, token_or_env
from podplane.cli.table import Call

job_app = typer.Typer(no_args_is_help=True, help="Submit, watch and stop training jobs.")
out = Console()
Job = Annotated[str, typer.Argument(help="The job's name.")]
Cluster = Annotated[str, typer.Argument(help="The managed cluster.")]
Wait = Annotated[bool, typer.Option("--wait/--no-wait", help="Follow the operation live.")]
Yes = Annotated[bool, typer.Option("--yes", help="Confirm a destructive change.")]
DryRun = Annotated[bool, typer.Option("--dry-run", help="Show the plan; change nothing.")]
DONE = ("Succeeded", "Failed", "Cancelled")
FOLLOW_EVERY = 2.0


def install(app: typer.Typer) -> None:
    app.add_typer(job_app, name="job")


def _show(answer: dict[str, Any], url: str, token: str, wait: bool) -> None:
    show_change(answer, Call({"wait": wait}, Remote(url, token), url, token))


def _jobs(cluster: str, *rest: str) -> str:
    return api("clusters", cluster, "jobs", *rest)


def parse_param(text: str) -> tuple[str, Any]:
    """`name=value`, the value read as a bool, an int, a float, else text."""
    name, sep, raw = text.partition("=")
    if not sep or not name:
        raise typer.BadParameter(f"{text!r} is not name=value")
    if raw.lower() in ("true", "false"):
        return name, raw.lower() == "true"
    for kind in (int, float):
        try:
            return name, kind(raw)
        except ValueError:
            pass
    return name, raw


@job_app.command("recipes")
def recipes(url: UrlOpt = URL, token: TokenOpt = "") -> None:
    """Recipes with their job kind and parameters (default [min..max])."""
    table = Table("recipe", "framework", "kind", "parameters")
    for r in Remote(url, token_or_env(token)).call("GET", api("recipes")):
        params = ", ".join(f"{p['name']}={p['default']}" for p in r["params"])
        table.add_row(r["name"], r["framework"], r["kind"], params)
    out.print(table)


@job_app.command("submit")
def submit(
    cluster: Cluster, name: Job,
    group: Annotated[str, typer.Option("--group", help="The instance group.")],
    command: Annotated[list[str] | None, typer.Argument(
        help="With --image: the argv to run, after `--` (e.g. -- python /data/train.py).",
        show_default=False)] = None,
    recipe: Annotated[str | None, typer.Option("--recipe",
                                               help="See `podplane job recipes`.")] = None,
    image: Annotated[str | None, typer.Option("--image", help="Your own image, instead of "
                                              "a recipe.")] = None,
    kind: Annotated[str, typer.Option("--kind", help="With --image: PyTorchJob, "
                                      "HyperPodPyTorchJob or RayJob.")] = "PyTorchJob",
    env: Annotated[list[str] | None, typer.Option("--env", "-e", help="With --image: "
                                                  "NAME=value (repeat).")] = None,
    replicas: Annotated[int | None, typer.Option("--replicas", min=1)] = None,
    gpus: Annotated[int | None, typer.Option("--gpus-per-replica", min=0)] = None,
    param: Annotated[list[str] | None, typer.Option("--param", "-p",
                                                    help="name=value (repeat)")] = None,
    max_restarts: Annotated[int, typer.Option("--max-restarts", min=0)] = 2,
    elastic: Annotated[bool, typer.Option("--elastic")] = False,
    dry_run: DryRun = False, wait: Wait = True, url: UrlOpt = URL, token: TokenOpt = "",
) -> None:
    """Submit a job from a recipe, or your own image and command (the plan checks
    parameters, GPUs and Spot)."""
    body = {"name": name, "recipe": recipe, "instance_group": group, "replicas": replicas,
            "gpus_per_replica": gpus, "params": dict(parse_param(p) for p in param or []),
            "max_restarts": max_restarts, "elastic": elastic, "dry_run": dry_run,
            "container": _container(image, kind, command or [], env or [])}
    token = token_or_env(token)
    answer = Remote(url, token).call("POST", _jobs(cluster),
                                     json={k: v for k, v in body.items() if v is not None})
    _show(answer, url, token, wait)


def _container(image: str | None, kind: str, command: list[str],
               env: list[str]) -> dict[str, Any] | None:
    """Your own workload's body (the server checks it and names a bad field); None without
    --image. The whole argv is the container's command: no shell reads it."""
    if image is None:
        if command or env:
            raise typer.BadParameter("a command or --env needs --image")
        return None
    pairs = [text.partition("=") for text in env]
    if any(not sep or not key for key, sep, _ in pairs):
        raise typer.BadParameter("--env takes NAME=value")
    return {"kind": kind, "image": image, "command": command,
            "env": {key: value for key, _, value in pairs}}


@job_app.command("list")
def job_list(cluster: Cluster, url: UrlOpt = URL, token: TokenOpt = "") -> None:
    """Every training job on the cluster (also those submitted with `hyp`)."""
    table = Table("job", "kind", "recipe / image", "status", "replicas", "created")
    for j in Remote(url, token_or_env(token)).call("GET", _jobs(cluster)):
        table.add_row(j["name"], j["kind"], j["recipe"] or j["image"] or "", j["status"],
                      str(j["replicas"]), j["created_at"] or "")
    out.print(table)


@job_app.command("get")
def job_get(cluster: Cluster, job: Job, url: UrlOpt = URL, token: TokenOpt = "") -> None:
    """Status, restart budget, last fault, and each pod's node with its health verdict."""
    j = Remote(url, token_or_env(token)).call("GET", _jobs(cluster, job))
    r = j["restarts"]
    made = f"recipe {j['recipe']}" if j["recipe"] else f"image {j['image']}"
    out.print(f"{j['name']} ({j['kind']}, {escape(made)}): [bold]{j['status']}[/]  "
              f"restarts {r['spent']}/{r['budget']} spent")
    if j["last_fault"]:
        f = j["last_fault"]
        out.print(f"[yellow]last fault[/] {', '.join(f['instance_ids'])}: "
                  f"{escape(f['message'] or '')}")
    table = Table("pod", "phase", "node", "node health", "restarts")
    for p in j["pods"]:
        verdict = p["node_verdict"] or {}
        table.add_row(p["name"], p["phase"], p["node"] or "", verdict.get("health") or "",
                      str(p["restarts"]))
    out.print(table)


@job_app.command("events")
def job_events(cluster: Cluster, job: Job, url: UrlOpt = URL, token: TokenOpt = "") -> None:
    """Events of the job and its pods."""
    table = Table("time", "type", "object", "reason", "message")
    for e in Remote(url, token_or_env(token)).call("GET", _jobs(cluster, job, "events")):
        table.add_row(e["time"] or "", e["type"] or "", e["object"] or "", e["reason"] or "",
                      escape(e["message"] or ""))
    out.print(table)


@job_app.command("logs")
def job_logs(
    cluster: Cluster, job: Job,
    pod: Annotated[str | None, typer.Option("--pod")] = None,
    container: Annotated[str | None, typer.Option("--container", "-c")] = None,
    tail: Annotated[int | None, typer.Option("--tail", min=1)] = None,
    since: Annotated[int | None, typer.Option("--since", min=1, help="Seconds.")] = None,
    follow: Annotated[bool, typer.Option("--follow", "-f")] = False,
    url: UrlOpt = URL, token: TokenOpt = "",
) -> None:
    """Logs of every pod (prefixed with the pod), or one; -f follows until the job ends."""
    remote = Remote(url, token_or_env(token))
    seen: dict[str, int] = {}
    query = {k: v for k, v in {"container": container, "tail": tail,
                               "since_seconds": since}.items() if v is not None}
    while True:
        pods = [pod] if pod else [p["name"] for p in
                                  remote.call("GET", _jobs(cluster, job))["pods"]]
        for name in pods:
            seen[name] = _print_from(remote, cluster, job, name, query, seen.get(name, 0))
        if not follow or remote.call("GET", _jobs(cluster, job))["status"] in DONE:
            if follow:  # the last lines written before it ended
                for name in pods:
                    seen[name] = _print_from(remote, cluster, job, name, query, seen[name])
            return
        time.sleep(FOLLOW_EVERY)


def _print_from(remote: Remote, cluster: str, job: str, pod: str, query: dict[str, Any],
                cursor: int) -> int:
    """Print a pod's lines from `cursor` on, page by page; the next cursor."""
    while True:
        page = remote.call("GET", _jobs(cluster, job, "logs"),
                           params={**query, "pod": pod, "cursor": cursor, "limit": 1000})
        for line in page["lines"]:
            # log lines hold brackets ("[rank 0]") that are not markup
            out.print(f"[dim]{escape(line['pod'])}[/] {escape(line['line'])}", highlight=False)
        if page["next_cursor"] is None:
            return max(cursor, int(page["total"]))
        cursor = int(page["next_cursor"])


@job_app.command("cancel")
def job_cancel(cluster: Cluster, job: Job, dry_run: DryRun = False, wait: Wait = True,
               url: UrlOpt = URL, token: TokenOpt = "") -> None:
    """Stop a job: its pods are deleted, the job stays to be read."""
    token = token_or_env(token)
    _show(Remote(url, token).call("POST", _jobs(cluster, job, "cancel"),
                                  params={"dry_run": dry_run}), url, token, wait)


@job_app.command("delete")
def job_delete(cluster: Cluster, job: Job, yes: Yes = False, dry_run: DryRun = False,
               wait: Wait = True, url: UrlOpt = URL, token: TokenOpt = "") -> None:
    """Delete a job with its pods and logs (needs --yes); bucket outputs stay."""
    token = token_or_env(token)
    _show(Remote(url, token).call("DELETE", _jobs(cluster, job),
                                  params={"confirm": yes, "dry_run": dry_run}), url, token, wait)
