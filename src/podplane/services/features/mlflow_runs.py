"""What a job logged to SageMaker MLflow, for the job view: the newest run of the job's
experiment with the last value of each metric, and a link to it in the MLflow UI.

The job's own manifest says where it logs (MLFLOW_TRACKING_URI, the server's ARN, and
MLFLOW_EXPERIMENT_NAME, set at submit while the mlflow feature is on), so a job submitted
before the feature was switched off still shows its run. The link is the server's UI URL
(DescribeMlflowTrackingServer TrackingServerUrl) with MLflow UI's run route
(`#/experiments/<id>/runs/<run>`); opening it needs a signed-in AWS console session, or a
presigned URL (CreatePresignedMlflowTrackingServerUrl, valid 5 to 300 seconds), which is
why none is minted for every page view.
"""

from __future__ import annotations

from typing import Any

from podplane.cloud.ports_mlflow import MlflowPort
from podplane.domain.errors import CloudError
from podplane.domain.features.mlflow import SERVER_ARN, SERVICE_ACCOUNT

Shape = dict[str, Any]
ENV = ("MLFLOW_TRACKING_URI", "MLFLOW_EXPERIMENT_NAME")


def target_of(job: Shape) -> tuple[str, str] | None:
    """(tracking server ARN, experiment) from the job's pod template, or None."""
    spec = job.get("spec") or {}
    templates = [r.get("template") or {} for r in spec.get("replicaSpecs") or []]
    templates += [r.get("template") or {} for r in (spec.get("pytorchReplicaSpecs") or {})
                  .values()]
    for template in templates:
        for container in (template.get("spec") or {}).get("containers") or []:
            env = {e.get("name"): e.get("value") for e in container.get("env") or []}
            if all(env.get(k) for k in ENV):
                return str(env[ENV[0]]), str(env[ENV[1]])
    return None


async def run_view(port: MlflowPort, job: Shape) -> Shape | None:
    target = target_of(job)
    if target is None:
        return None
    arn, experiment = target
    out: Shape = {"tracking_server_arn": arn, "experiment": experiment,
                  "service_account": SERVICE_ACCOUNT, "run_id": None, "status": None,
                  "metrics": {}, "url": None, "error": None}
    try:
        found, runs = await port.runs_of(arn, experiment, 1)
        name = SERVER_ARN.fullmatch(arn)
        server = await port.describe_tracking_server(name.group(1)) if name else None
    except CloudError as err:
        return {**out, "error": err.message}
    base = str((server or {}).get("TrackingServerUrl") or "").rstrip("/")
    if found is None or not runs:
        return {**out, "url": base or None}
    info, data = runs[0].get("info") or {}, runs[0].get("data") or {}
    exp_id, run_id = found.get("experiment_id"), info.get("run_id")
    return {**out, "run_id": run_id, "run_name": info.get("run_name"),
            "status": info.get("status"),
            "metrics": {m["key"]: m.get("value") for m in data.get("metrics") or []},
            "url": f"{base}/#/experiments/{exp_id}/runs/{run_id}" if base else None}
