"""A SageMaker MLflow tracking server's REST API: the part of MLflow REST API 2.0 a training
script's MLflow client uses to log a run (mlflow.org/docs/latest/rest-api.html):

  GET  experiments/get-by-name, experiments/get      POST experiments/create
  POST runs/create, runs/update, runs/search          GET  runs/get
  POST runs/log-metric, runs/log-batch, runs/log-parameter, runs/set-tag

Errors are MLflow's `{"error_code", "message"}`: RESOURCE_DOES_NOT_EXIST (404),
RESOURCE_ALREADY_EXISTS and INVALID_PARAMETER_VALUE (400); a param, once logged, keeps its
value (MLflow refuses a change). Ids: experiments are numbers as strings ("0" is Default),
runs 32 hex digits; a run's `data.metrics` holds each metric's latest value.

How SageMaker fronts it (aws/sagemaker-mlflow, mlflow_sagemaker_helpers.py, auth.py,
mlflow_sagemaker_request_header_provider.py): requests are SigV4-signed for the service
`sagemaker-mlflow` and name the server in `x-mlflow-sm-tracking-server-arn`; each REST call is
authorized as the IAM action `sagemaker-mlflow:<Action>` on the server's ARN (Service
Authorization Reference, Amazon SageMaker with MLflow). Pods of a training job log through
`log_training_run`, which checks those actions against the pod's Pod Identity role.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

from podplane_sandbox.aws.mlflow import server_by_arn
from podplane_sandbox.aws.world import World

Shape = dict[str, Any]
Response = tuple[int, dict[str, str], bytes]
PREFIXES = ("/api/2.0/mlflow/", "/ajax-api/2.0/mlflow/")
ARN_HEADER = "HTTP_X_MLFLOW_SM_TRACKING_SERVER_ARN"
SERVING = ("Created", "Updated", "Started", "MaintenanceComplete")
_SCOPE = re.compile(r"Credential=[^/]+/\d+/[^/]+/([^/]+)/aws4_request")
_FILTER = re.compile(r"\s*(tags|attributes|attribute|params|param|tag)?\.?`?([\w.\-]+)`?"
                     r"\s*=\s*'([^']*)'\s*")


class MlflowError(Exception):
    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code, self.message, self.status = code, message, status


def handles(path: str) -> bool:
    return path.startswith(PREFIXES)


def serve(world: World, environ: dict[str, Any], body: bytes) -> Response:
    """One HTTP request to the tracking endpoint (the AWS router hands it over)."""
    scope = _SCOPE.search(environ.get("HTTP_AUTHORIZATION", ""))
    if scope is None or scope.group(1) != "sagemaker-mlflow":
        return _answer(403, {"message": "Requests to SageMaker MLflow must be signed with "
                                        "SigV4 for the service sagemaker-mlflow."})
    path = environ.get("PATH_INFO", "")
    op = next(path[len(p):] for p in PREFIXES if path.startswith(p))
    query = {k: v[0] for k, v in parse_qs(environ.get("QUERY_STRING", "")).items()}
    try:
        params = {**query, **(json.loads(body) if body else {})}
        return _answer(200, call(world, environ.get(ARN_HEADER, ""),
                                 environ["REQUEST_METHOD"], op, params))
    except MlflowError as err:
        return _answer(err.status, {"error_code": err.code, "message": err.message})
    except (json.JSONDecodeError, TypeError, ValueError, KeyError) as err:
        return _answer(400, {"error_code": "INVALID_PARAMETER_VALUE", "message": str(err)})


def call(world: World, arn: str, method: str, op: str, params: Shape) -> Shape:
    route = ROUTES.get((method, op))
    if route is None:
        raise MlflowError("ENDPOINT_NOT_FOUND", f"{method} {op} is not served by the podplane "
                          "sandbox's tracking server.", 404)
    server = server_by_arn(world, arn)
    if server is None:
        raise MlflowError("RESOURCE_DOES_NOT_EXIST", f"No tracking server {arn!r}.", 404)
    if server["TrackingServerStatus"] not in SERVING:
        raise MlflowError("TEMPORARILY_UNAVAILABLE", f"The tracking server is "
                          f"{server['TrackingServerStatus']}.", 503)
    with world.lock:
        store = world.service_state("sagemaker-mlflow").setdefault("tracking", {})
        return route[1](_Store(store.setdefault(arn, {}), world), params)


def action_of(method: str, op: str) -> str | None:
    route = ROUTES.get((method, op))
    return route[0] if route else None


class _Store:
    def __init__(self, state: Shape, world: World) -> None:
        self.w = world
        self.experiments: dict[str, Shape] = state.setdefault("experiments", {
            "0": _experiment("0", "Default", world.now())})
        self.runs: dict[str, Shape] = state.setdefault("runs", {})

    def run(self, run_id: str) -> Shape:
        found = self.runs.get(str(run_id))
        if found is None:
            raise MlflowError("RESOURCE_DOES_NOT_EXIST", f"Run '{run_id}' not found", 404)
        return found

    def experiment(self, exp_id: str) -> Shape:
        found = self.experiments.get(str(exp_id))
        if found is None:
            raise MlflowError("RESOURCE_DOES_NOT_EXIST",
                              f"No Experiment with id={exp_id} exists", 404)
        return found


def _experiment(exp_id: str, name: str, now: float) -> Shape:
    ms = int(now * 1000)
    return {"experiment_id": exp_id, "name": name, "artifact_location": "",
            "lifecycle_stage": "active", "creation_time": ms, "last_update_time": ms,
            "tags": []}


# experiments -------------------------------------------------------------------------------
def _get_by_name(s: _Store, p: Shape) -> Shape:
    for exp in s.experiments.values():
        if exp["name"] == p.get("experiment_name"):
            return {"experiment": exp}
    raise MlflowError("RESOURCE_DOES_NOT_EXIST",
                      f"Could not find experiment with name '{p.get('experiment_name')}'", 404)


def _get_experiment(s: _Store, p: Shape) -> Shape:
    return {"experiment": s.experiment(p["experiment_id"])}


def _create_experiment(s: _Store, p: Shape) -> Shape:
    name = str(p.get("name") or "")
    if not name:
        raise MlflowError("INVALID_PARAMETER_VALUE", "Experiment name must not be empty.")
    if any(e["name"] == name for e in s.experiments.values()):
        raise MlflowError("RESOURCE_ALREADY_EXISTS",
                          f"Experiment '{name}' already exists.")
    exp_id = str(max(int(k) for k in s.experiments) + 1)
    s.experiments[exp_id] = {**_experiment(exp_id, name, s.w.now()),
                             "artifact_location": p.get("artifact_location") or "",
                             "tags": list(p.get("tags") or [])}
    return {"experiment_id": exp_id}


# runs --------------------------------------------------------------------------------------
def _create_run(s: _Store, p: Shape) -> Shape:
    exp = s.experiment(p.get("experiment_id") or "0")
    run_id = s.w.hex_id(32)
    tags = list(p.get("tags") or [])
    name = p.get("run_name") or next((t["value"] for t in tags
                                      if t.get("key") == "mlflow.runName"), run_id[:8])
    s.runs[run_id] = {
        "info": {"run_id": run_id, "run_uuid": run_id, "run_name": name,
                 "experiment_id": exp["experiment_id"], "user_id": p.get("user_id", ""),
                 "status": "RUNNING", "start_time": int(p.get("start_time") or
                                                        s.w.now() * 1000),
                 "artifact_uri": f"{exp['artifact_location']}/{run_id}/artifacts",
                 "lifecycle_stage": "active"},
        "data": {"metrics": [], "params": [], "tags": tags}, "history": []}
    return {"run": _public(s.runs[run_id])}


def _update_run(s: _Store, p: Shape) -> Shape:
    run = s.run(p.get("run_id") or p.get("run_uuid"))
    status = p.get("status")
    if status and status not in ("RUNNING", "SCHEDULED", "FINISHED", "FAILED", "KILLED"):
        raise MlflowError("INVALID_PARAMETER_VALUE", f"Invalid run status {status!r}.")
    run["info"].update({k: v for k, v in (("status", status), ("end_time", p.get("end_time")),
                                          ("run_name", p.get("run_name"))) if v})
    return {"run_info": dict(run["info"])}


def _get_run(s: _Store, p: Shape) -> Shape:
    return {"run": _public(s.run(p.get("run_id") or p.get("run_uuid")))}


def _search_runs(s: _Store, p: Shape) -> Shape:
    ids = {str(i) for i in p.get("experiment_ids") or []}
    wanted = _clauses(str(p.get("filter") or ""))
    found = [r for r in s.runs.values()
             if r["info"]["experiment_id"] in ids and all(_matches(r, c) for c in wanted)]
    descending = any("DESC" in str(o).upper() for o in p.get("order_by") or ["x DESC"])
    found.sort(key=lambda r: r["info"]["start_time"], reverse=descending)
    size = int(p.get("max_results") or 1000)
    start = int(p.get("page_token") or 0)
    page = found[start:start + size]
    out: Shape = {"runs": [_public(r) for r in page]}
    if start + size < len(found):
        out["next_page_token"] = str(start + size)
    return out


def _log_metric(s: _Store, p: Shape) -> Shape:
    _metric(s.run(p["run_id"]), p)
    return {}


def _log_param(s: _Store, p: Shape) -> Shape:
    _param(s.run(p["run_id"]), p["key"], str(p["value"]))
    return {}


def _set_tag(s: _Store, p: Shape) -> Shape:
    run = s.run(p["run_id"])
    tags = [t for t in run["data"]["tags"] if t["key"] != p["key"]]
    run["data"]["tags"] = [*tags, {"key": p["key"], "value": str(p["value"])}]
    return {}


def _log_batch(s: _Store, p: Shape) -> Shape:
    run = s.run(p["run_id"])
    for param in p.get("params") or []:
        _param(run, param["key"], str(param["value"]))
    for metric in p.get("metrics") or []:
        _metric(run, metric)
    for tag in p.get("tags") or []:
        _set_tag(s, {"run_id": p["run_id"], **tag})
    return {}


def _metric(run: Shape, m: Shape) -> None:
    if not m.get("key") or not isinstance(m.get("value"), int | float):
        raise MlflowError("INVALID_PARAMETER_VALUE", "A metric needs a key and a numeric "
                          "value.")
    point = {"key": m["key"], "value": float(m["value"]),
             "timestamp": int(m.get("timestamp") or 0), "step": int(m.get("step") or 0)}
    run["history"].append(point)
    latest = [x for x in run["data"]["metrics"] if x["key"] != m["key"]]
    run["data"]["metrics"] = [*latest, point]


def _param(run: Shape, key: str, value: str) -> None:
    for param in run["data"]["params"]:
        if param["key"] == key:
            if param["value"] != value:
                raise MlflowError("INVALID_PARAMETER_VALUE", f"Changing param values is not "
                                  f"allowed. Param with key='{key}' was already logged with "
                                  f"value='{param['value']}'.")
            return
    run["data"]["params"].append({"key": key, "value": value})


def _clauses(text: str) -> list[tuple[str, str, str]]:
    out = []
    for part in filter(None, re.split(r"\s+and\s+", text.strip(), flags=re.IGNORECASE)):
        found = _FILTER.fullmatch(part)
        if found is None:
            raise MlflowError("INVALID_PARAMETER_VALUE", f"Unsupported filter {part!r}.")
        out.append(((found.group(1) or "attributes").rstrip("s"), found.group(2),
                    found.group(3)))
    return out


def _matches(run: Shape, clause: tuple[str, str, str]) -> bool:
    kind, key, value = clause
    if kind in ("tag", "param"):
        return any(x["key"] == key and x["value"] == value
                   for x in run["data"][kind + "s"])
    return str(run["info"].get(key)) == value


def _public(run: Shape) -> Shape:
    return {"info": dict(run["info"]), "data": {k: list(v) for k, v in run["data"].items()}}


def _answer(status: int, payload: Shape) -> Response:
    return status, {"Content-Type": "application/json"}, json.dumps(payload).encode()


Handler = Callable[[_Store, Shape], Shape]
ROUTES: dict[tuple[str, str], tuple[str, Handler]] = {
    ("GET", "experiments/get-by-name"): ("GetExperimentByName", _get_by_name),
    ("GET", "experiments/get"): ("GetExperiment", _get_experiment),
    ("POST", "experiments/create"): ("CreateExperiment", _create_experiment),
    ("POST", "runs/create"): ("CreateRun", _create_run),
    ("POST", "runs/update"): ("UpdateRun", _update_run),
    ("GET", "runs/get"): ("GetRun", _get_run),
    ("POST", "runs/search"): ("SearchRuns", _search_runs),
    ("POST", "runs/log-metric"): ("LogMetric", _log_metric),
    ("POST", "runs/log-batch"): ("LogBatch", _log_batch),
    ("POST", "runs/log-parameter"): ("LogParam", _log_param),
    ("POST", "runs/set-tag"): ("SetTag", _set_tag),
}
