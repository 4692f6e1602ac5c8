"""Training processes that log to SageMaker MLflow: when global rank 0 of a job whose
container carries MLFLOW_TRACKING_URI (a tracking server's ARN, what the sagemaker-mlflow
plugin resolves) and MLFLOW_EXPERIMENT_NAME ends, it logs its run as the MLflow client would,
with the credentials EKS Pod Identity gave the pod (aws/mlflow_client.py). A refusal fails
the process, as an uncaught MlflowException would.
"""

from __future__ import annotations

from typing import Any

from podplane_sandbox.kube.pod_identity import has_credentials
from podplane_sandbox.kube.s3_mounts import _rank_zero

Obj = dict[str, Any]


def install(ctx: Any, source: Any, eks_cluster_name: str | None) -> None:
    if hasattr(source, "mlflow_log_run") and hasattr(source, "pod_identity_role"):
        ctx.mlflow_runs = (source, eks_cluster_name)


def log(ctx: Any, pod: Obj, started: float, finished: float, ok: bool) -> str | None:
    """Called by the kubelet when a container exits; the client's error, else None."""
    wired = getattr(ctx, "mlflow_runs", None)
    if wired is None or not _rank_zero(pod):
        return None
    source, cluster = wired
    for container in pod["spec"].get("containers") or []:
        env = {e.get("name"): e.get("value") for e in container.get("env") or []}
        arn, experiment = env.get("MLFLOW_TRACKING_URI"), env.get("MLFLOW_EXPERIMENT_NAME")
        if not arn or not experiment:
            continue
        ns = pod["metadata"].get("namespace", "default")
        account = pod["spec"].get("serviceAccountName") or "default"
        role = source.pod_identity_role(cluster, ns, account) if has_credentials(pod) else None
        return source.mlflow_log_run(role, arn, experiment, {
            "job": env.get("PODPLANE_JOB") or pod["metadata"]["name"],
            "recipe": env.get("PODPLANE_RECIPE"), "started": started, "finished": finished,
            "ok": ok})  # type: ignore[no-any-return]
    return None
