"""What a training script that uses MLflow's client sends when its run ends, as the pod's own
identity: the calls `mlflow.set_experiment`, `mlflow.start_run`, `mlflow.log_params`,
`mlflow.log_metric` and `mlflow.end_run` make (MLflow REST API 2.0, in that order), each
authorized as `sagemaker-mlflow:<Action>` on the server's ARN for the pod's Pod Identity role
(IAM policy evaluation, iam_policy.py). The first refusal ends the script, as the client
raises on an HTTP 403.
"""

from __future__ import annotations

import math
from typing import Any

from podplane_sandbox.aws import mlflow_tracking as tracking
from podplane_sandbox.aws.world import World

Shape = dict[str, Any]


def log_training_run(world: World, role_arn: str | None, arn: str, experiment: str,
                     run: Shape) -> str | None:
    """`run`: job, recipe, started and finished (virtual seconds), ok. The error the client
    would raise, or None once the run is logged."""
    if role_arn is None:
        return ("NoCredentialsError: Unable to locate credentials (no Pod Identity "
                "association for the pod's service account)")
    client = _Client(world, role_arn, arn)
    try:
        found = client.get("experiments/get-by-name", {"experiment_name": experiment})
        exp_id = found["experiment"]["experiment_id"] if found else client.post(
            "experiments/create", {"name": experiment})["experiment_id"]
        started, finished = float(run["started"]), float(run["finished"])
        run_id = client.post("runs/create", {
            "experiment_id": exp_id, "start_time": int(started * 1000), "run_name": run["job"],
            "tags": [{"key": "mlflow.runName", "value": run["job"]},
                     {"key": "mlflow.source.name", "value": run["recipe"] or "train.py"}]}
        )["run"]["info"]["run_id"]
        client.post("runs/log-batch", {"run_id": run_id, "params": [
            {"key": "recipe", "value": run["recipe"] or ""},
            {"key": "job", "value": run["job"]}]})
        for point in _metrics(started, finished):
            client.post("runs/log-metric", {"run_id": run_id, **point})
        client.post("runs/update", {"run_id": run_id, "end_time": int(finished * 1000),
                                    "status": "FINISHED" if run["ok"] else "FAILED"})
    except tracking.MlflowError as err:
        return f"MlflowException: {err.code}: {err.message}"
    return None


class _Client:
    def __init__(self, world: World, role_arn: str, arn: str) -> None:
        self.w, self.role, self.arn = world, role_arn, arn

    def get(self, op: str, params: Shape) -> Shape | None:
        try:
            return self._send("GET", op, params)
        except tracking.MlflowError as err:
            if err.code == "RESOURCE_DOES_NOT_EXIST" and op.startswith("experiments"):
                return None
            raise

    def post(self, op: str, params: Shape) -> Shape:
        return self._send("POST", op, params)

    def _send(self, method: str, op: str, params: Shape) -> Shape:
        action = f"sagemaker-mlflow:{tracking.action_of(method, op)}"
        if not _allowed(self.role, action, self.arn):
            raise tracking.MlflowError("PERMISSION_DENIED", f"User: {self.role} is not "
                                       f"authorized to perform: {action} on resource: "
                                       f"{self.arn}", 403)
        return tracking.call(self.w, self.arn, method, op, params)


def _allowed(role_arn: str, action: str, resource: str) -> bool:
    from podplane_sandbox.aws.iam_policy import allows, entity_documents
    from podplane_sandbox.aws.iam_rules import _role

    role = _role(role_arn)
    return role is not None and allows(entity_documents([role]), action, resource, {})


def _metrics(started: float, finished: float) -> list[Shape]:
    """A few points of a falling training loss, one per 10 steps the log printed (logs.py
    prints a step every 5 s), and the run's length."""
    seconds = max(finished - started, 1.0)
    last = int(seconds // 5) * 10
    steps = sorted({0, last // 3, 2 * last // 3, last})
    out = [{"key": "train_loss", "value": round(2.5 * math.exp(-step / 400) + 0.3, 4),
            "step": step, "timestamp": int((started + step / 2) * 1000)} for step in steps]
    out.append({"key": "train_runtime", "value": round(seconds, 1), "step": last,
                "timestamp": int(finished * 1000)})
    return out
