"""`podplane endpoint ...`: inference endpoints over REST, one row per REST call
(`cli/table.py`)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape

from podplane.cli.groups import CLUSTER, DRY_BODY, DRY_QUERY, WAIT, YES, show_change
from podplane.cli.remote import out
from podplane.cli.table import Arg, Call, Command, mount, table

NAME = Arg("name", Annotated[str, typer.Argument(help="The endpoint's name.")])
ENDPOINTS = "clusters/{cluster}/endpoints"
SCALE_KEYS = ("min_replicas", "max_replicas", "metric", "target", "cooldown_seconds")


def autoscale(text: str | None) -> Any:
    """`MIN:MAX[:running|waiting[:TARGET[:COOLDOWN]]]` -> the autoscaling object; `off`."""
    if text is None or text == "off":
        return text
    parts = text.split(":")
    if not 2 <= len(parts) <= len(SCALE_KEYS):
        raise typer.BadParameter("MIN:MAX[:running|waiting[:TARGET[:COOLDOWN_SECONDS]]]")
    return dict(zip(SCALE_KEYS, parts, strict=False))


AUTOSCALE = Arg("autoscale", Annotated[str | None, typer.Option(
    "--autoscale", help="KEDA: MIN:MAX[:running|waiting[:TARGET[:COOLDOWN_S]]], or off.")],
    None, to="body", key="autoscaling", convert=autoscale)


def show_endpoint(e: dict[str, Any], call: Call) -> None:
    out.print(f"{e['name']} ({e['engine']}, {e['model']}): [bold]{e['status']}[/]  "
              f"{e['ready_replicas']}/{e['replicas']} ready, TP {e['tensor_parallel']}, "
              f"{e['exposure']}" + (f" {e['load_balancer']}" if e["load_balancer"] else ""))
    if a := e.get("autoscaling"):
        out.print(f"autoscaling {a['min_replicas']}-{a['max_replicas']} on {a['metric']} "
                  f"(target {a['target']}/pod, cooldown {a['cooldown_seconds']} s): HPA wants "
                  f"{a['desired_replicas']}, now {a['current_metric']}/pod")
    table(("pod", lambda p: p["name"]), ("phase", lambda p: p["phase"]),
          ("node", lambda p: p["node"] or ""), ("ready", lambda p: "yes" if p["ready"] else ""),
          rows=lambda a: a["pods"])(e, call)
    if e.get("router"):
        out.print(f"router ({e['router']}): " + ", ".join(
            f"{p['name']} {'Ready' if p['ready'] else p['phase']}"
            for p in e.get("router_pods", [])))


def show_answer(a: dict[str, Any], call: Call) -> None:
    """An OpenAI-compatible answer, or the LMI container's (`generated_text`, `details`)."""
    r = a["response"]
    choice = (r.get("choices") or [{}])[0]
    text = choice.get("text") or (choice.get("message") or {}).get("content") or \
        r.get("generated_text") or ""
    out.print(text, highlight=False, markup=False)
    u = r.get("usage") or {}
    made = u.get("completion_tokens", (r.get("details") or {}).get("generated_tokens"))
    out.print(f"[dim]{a['path']}: {u.get('prompt_tokens', '?')} prompt + "
              f"{made} completion tokens[/]")


def show_logs(page: dict[str, Any], call: Call) -> None:
    """A page of lines, each after its pod; how to read on when the page is not the last."""
    for line in page["lines"]:
        # log lines hold brackets that are not markup
        out.print(f"[dim]{escape(line['pod'])}[/] {escape(line['line'])}", highlight=False)
    for pod, why in page["notes"].items():
        out.print(f"[dim]{escape(pod)}: {escape(why)}[/]")
    if page["next_cursor"] is not None:
        out.print(f"[dim]more: --cursor {page['next_cursor']} ({page['total']} lines)[/]")


COMMANDS = (
    Command("list", "GET", ENDPOINTS, "Endpoints with engine, model and ready replicas.",
            (CLUSTER,), show=table(
                ("endpoint", lambda e: e["name"]), ("engine", lambda e: e["engine"]),
                ("model", lambda e: e["model"]), ("tp", lambda e: e["tensor_parallel"]),
                ("ready", lambda e: f"{e['ready_replicas']}/{e['replicas']}"),
                ("status", lambda e: e["status"]),
                # an endpoint on a warm pool: its pods are the pool's
                ("exposure", lambda e: f"pool {e['pool']}" if e.get("pool") else e["exposure"]))),
    Command("create", "POST", ENDPOINTS,
            "Deploy a model with vLLM or SGLang (GPUs per pod = --tp, checked against the "
            "group's instance type).", (
                CLUSTER, Arg("name", NAME.kind, to="body"),
                Arg("group", Annotated[str, typer.Option("--group", help="Instance group.")],
                    to="body", key="instance_group"),
                Arg("model", Annotated[str, typer.Option(
                    "--model", help="s3://bucket/prefix, a Hugging Face id; managed: fsx:path, "
                    "jumpstart:id[@version].")], to="body"),
                Arg("engine", Annotated[str, typer.Option("--engine", help="vllm or sglang.")],
                    "vllm", to="body"),
                Arg("image", Annotated[str | None, typer.Option("--image")], None, to="body"),
                Arg("tp", Annotated[int, typer.Option("--tp", min=1)], 1, to="body",
                    key="tensor_parallel"),
                Arg("pp", Annotated[int | None, typer.Option("--pp", min=1)], None,
                    to="body", key="pipeline_parallel"),
                Arg("max_model_len", Annotated[int | None, typer.Option("--max-model-len")],
                    None, to="body"),
                Arg("dtype", Annotated[str, typer.Option("--dtype")], "auto", to="body"),
                Arg("replicas", Annotated[int, typer.Option("--replicas", min=1)], 1,
                    to="body"),
                Arg("exposure", Annotated[str, typer.Option(
                    "--exposure", help="service or load_balancer (internal to the VPC).")],
                    "service", to="body"),
                Arg("public", Annotated[bool, typer.Option(
                    "--public", help="Internet-facing load balancer (admin, needs "
                    "--source-range and --yes).")], False, to="body",
                    convert=lambda given: given or None),
                Arg("source_ranges", Annotated[list[str] | None, typer.Option(
                    "--source-range", help="A CIDR allowed to reach the load balancer "
                    "(repeat).")], None, to="body"),
                Arg("yes", YES.kind, False, to="body", key="confirm",
                    convert=lambda given: given or None),
                Arg("kind", Annotated[str, typer.Option(
                    "--kind", help="self_managed or managed (inference operator).")],
                    "self_managed", to="body"),
                Arg("accept_eula", Annotated[bool, typer.Option(
                    "--accept-eula", help="jumpstart: the model's licence was accepted.")],
                    False, to="body", convert=lambda given: given or None),  # sent when set
                Arg("router", Annotated[str | None, typer.Option("--router", help=(
                    "SGLang router policy: cache_aware, round_robin, random, "
                    "power_of_two."))], None, to="body"),
                AUTOSCALE, DRY_BODY, WAIT), show=show_change),
    Command("get", "GET", ENDPOINTS + "/{name}", "An endpoint with its pods.", (CLUSTER, NAME),
            show=show_endpoint),
    Command("scale", "PATCH", ENDPOINTS + "/{name}", "Set the replicas (0 stops serving).", (
        CLUSTER, NAME,
        Arg("replicas", Annotated[int, typer.Argument(min=0, help="Pods wanted.")],
            to="body"), DRY_BODY, WAIT), show=show_change),
    Command("update", "PATCH", ENDPOINTS + "/{name}",
            "Change the image, model or parallelism: rolling update, then one real request; "
            "a failure rolls back. --autoscale alone sets or stops autoscaling.", (
                CLUSTER, NAME,
                Arg("image", Annotated[str | None, typer.Option("--image")], None, to="body"),
                Arg("model", Annotated[str | None, typer.Option("--model")], None, to="body"),
                Arg("tp", Annotated[int | None, typer.Option("--tp", min=1)], None, to="body",
                    key="tensor_parallel"),
                Arg("pp", Annotated[int | None, typer.Option("--pp", min=1)], None, to="body",
                    key="pipeline_parallel"),
                Arg("max_model_len", Annotated[int | None, typer.Option("--max-model-len")],
                    None, to="body"),
                Arg("dtype", Annotated[str | None, typer.Option("--dtype")], None, to="body"),
                AUTOSCALE, DRY_BODY, WAIT), show=show_change),
    Command("delete", "DELETE", ENDPOINTS + "/{name}",
            "Delete the endpoint's Deployment, pods and Service (needs --yes).",
            (CLUSTER, NAME, YES, DRY_QUERY, WAIT), show=show_change),
    Command("logs", "GET", ENDPOINTS + "/{name}/logs",
            "Logs of the endpoint's engine and router pods (or --pod), one page of lines.", (
                CLUSTER, NAME,
                Arg("pod", Annotated[str | None, typer.Option("--pod")], None, to="query"),
                Arg("container", Annotated[str | None, typer.Option("--container", "-c")],
                    None, to="query"),
                Arg("tail", Annotated[int | None, typer.Option("--tail", min=1)], None,
                    to="query"),
                Arg("since", Annotated[int | None, typer.Option(
                    "--since", min=1, help="Seconds.")], None, to="query",
                    key="since_seconds"),
                Arg("cursor", Annotated[int, typer.Option("--cursor", min=0)], 0,
                    to="query")), show=show_logs),
    Command("invoke", "POST", ENDPOINTS + "/{name}/invoke",
            "Send one small request through podplane (operator role).", (
                CLUSTER, NAME,
                Arg("prompt", Annotated[str, typer.Argument(help="The prompt.")], to="body"),
                Arg("max_tokens", Annotated[int, typer.Option("--max-tokens", min=1)], 16,
                    to="body"),
                Arg("chat", Annotated[bool, typer.Option("--chat")], False, to="body")),
            show=show_answer),
)


def install(app: typer.Typer) -> None:
    app.add_typer(mount(typer.Typer(no_args_is_help=True, help="Deploy, call and scale "
                                    "inference endpoints."), COMMANDS), name="endpoint")
