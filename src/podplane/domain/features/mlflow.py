"""SageMaker managed MLflow as a feature: one tracking server per cluster (or an existing one
named by the user, never deleted by podplane), and the identity jobs log to it with.

What it makes, in order (disable removes the same, in reverse):
1. the tracking server's role: trust `sagemaker.amazonaws.com`; S3 on the cluster bucket's
   `mlflow/<cluster>/` prefix only (SageMaker docs, "Set up IAM permissions for MLflow": the
   tracking server's service role needs S3 access to the artifact store; the doc's example
   grants s3:Get*/Put*/List* on the bucket, narrowed here to the prefix);
2. the tracking server (SageMaker API CreateMlflowTrackingServer; botocore `sagemaker`:
   TrackingServerName `[a-zA-Z0-9](-*[a-zA-Z0-9]){0,255}`, ArtifactStoreUri
   `(https|s3)://([^/]+)/?(.*)` up to 1024, TrackingServerSize Small|Medium|Large, RoleArn
   required; TrackingServerStatus Creating -> Created, Updating -> Updated, Deleting, ...);
3. the jobs' role: trust `pods.eks.amazonaws.com` (EKS Pod Identity), the `sagemaker-mlflow`
   actions a training run's MLflow client sends, on this server's ARN only (Service
   Authorization Reference, "Actions defined by Amazon SageMaker with MLflow": each takes the
   `mlflow-tracking-server` resource);
4. its Pod Identity association and the ServiceAccount jobs run as, annotated with the
   server's ARN (the job service reads it there to set MLFLOW_TRACKING_URI).
"""

from __future__ import annotations

import re
from typing import Any

from podplane.domain.errors import InvalidInput
from podplane.domain.features.model import FEATURE_TAG, Resource
from podplane.domain.jobs.kinds import NAMESPACE as JOBS_NAMESPACE

Shape = dict[str, Any]
NAME = "mlflow"
SIZES = ("Small", "Medium", "Large")          # botocore TrackingServerSize
SERVICE_ACCOUNT = "podplane-mlflow"           # what jobs run as while the feature is on
ARN_ANNOTATION = "podplane.io/mlflow-tracking-server"
SERVER_NAME = re.compile(r"[a-zA-Z0-9](-*[a-zA-Z0-9]){0,255}")
SERVER_ARN = re.compile(r"arn:aws[a-z\-]*:sagemaker:[a-z0-9\-]*:[0-9]{12}:"
                        r"mlflow-tracking-server/([a-zA-Z0-9](-*[a-zA-Z0-9]){0,255})")
CLUSTER_TAG = "podplane:cluster"
# The calls MLflow's client makes to log a run (mlflow REST API 2.0: experiments get-by-name /
# create / get, runs create / update / get / search, log-metric, log-batch, log-parameter,
# set-tag), as the sagemaker-mlflow action each needs (Service Authorization Reference).
JOB_ACTIONS = ("CreateExperiment", "GetExperiment", "GetExperimentByName", "SearchExperiments",
               "CreateRun", "GetRun", "UpdateRun", "SearchRuns", "LogMetric", "LogBatch",
               "LogParam", "SetTag", "GetMetricHistory")


def check(settings: Shape) -> Shape:
    size = settings["size"]
    if size not in SIZES:
        raise InvalidInput(f"size must be one of {', '.join(SIZES)} (TrackingServerSize).",
                           field="size")
    existing = settings["tracking_server"]
    if existing and not (SERVER_NAME.fullmatch(existing) or SERVER_ARN.fullmatch(existing)):
        raise InvalidInput("tracking_server must be a tracking server's name or ARN "
                           "(arn:aws:sagemaker:<region>:<account>:mlflow-tracking-server/"
                           "<name>), or empty to let podplane create one.",
                           field="tracking_server")
    return settings


def existing_name(settings: Shape) -> str:
    """The user's own tracking server's name ('' when podplane makes one)."""
    given = str(settings.get("tracking_server") or "")
    found = SERVER_ARN.fullmatch(given)
    return found.group(1) if found else given


def server_name(cluster: str) -> str:
    return f"podplane-{cluster}"


def artifact_prefix(cluster: str) -> str:
    return f"mlflow/{cluster}/"


def server_arn(account: str, region: str, name: str) -> str:
    return f"arn:aws:sagemaker:{region}:{account}:mlflow-tracking-server/{name}"


def server_policy(bucket: str, cluster: str) -> Shape:
    """The tracking server reads and writes artifacts under its prefix, nothing else."""
    prefix = artifact_prefix(cluster)
    return {"Version": "2012-10-17", "Statement": [
        {"Sid": "MlflowArtifacts", "Effect": "Allow",
         "Action": ["s3:GetObject", "s3:PutObject", "s3:DeleteObject",
                    "s3:AbortMultipartUpload"],
         "Resource": f"arn:aws:s3:::{bucket}/{prefix}*"},
        {"Sid": "ListMlflowPrefix", "Effect": "Allow",
         "Action": ["s3:ListBucket", "s3:GetBucketLocation"],
         "Resource": f"arn:aws:s3:::{bucket}",
         "Condition": {"StringLike": {"s3:prefix": [f"{prefix}*"]}}}]}


def job_policy(arn: str) -> Shape:
    return {"Version": "2012-10-17", "Statement": [{
        "Sid": "LogToTrackingServer", "Effect": "Allow",
        "Action": [f"sagemaker-mlflow:{a}" for a in JOB_ACTIONS], "Resource": arn}]}


def server(on: bool, settings: Shape, cluster: str, bucket: str, role_arn: str) -> Resource:
    """podplane's own tracking server; the fields compared for drift are the ones it sets."""
    return Resource(NAME, "mlflow-server", f"mlflow tracking server {server_name(cluster)}", {
        "TrackingServerName": server_name(cluster),
        "ArtifactStoreUri": f"s3://{bucket}/{artifact_prefix(cluster)}",
        "TrackingServerSize": settings["size"], "RoleArn": role_arn,
        "Tags": {FEATURE_TAG: NAME, CLUSTER_TAG: cluster}}, on)


def existing(on: bool, name: str) -> Resource:
    """The user's tracking server: observed (it must exist), never created nor deleted."""
    return Resource(NAME, "mlflow-server", f"mlflow tracking server {name}",
                    {"TrackingServerName": name}, on)


def create_request(res: Resource) -> Shape:
    want = res.desired
    return {"TrackingServerName": want["TrackingServerName"],
            "ArtifactStoreUri": want["ArtifactStoreUri"],
            "TrackingServerSize": want["TrackingServerSize"], "RoleArn": want["RoleArn"],
            "Tags": [{"Key": k, "Value": v} for k, v in want["Tags"].items()]}


def service_account(arn: str) -> Shape:
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {
        "name": SERVICE_ACCOUNT, "namespace": JOBS_NAMESPACE,
        "annotations": {ARN_ANNOTATION: arn}}}


def job_env(arn: str, experiment: str) -> list[Shape]:
    """What the MLflow client reads (mlflow docs, environment variables): the tracking URI is
    the server's ARN, which the sagemaker-mlflow plugin resolves (SageMaker docs, "Integrate
    MLflow with your environment")."""
    return [{"name": "MLFLOW_TRACKING_URI", "value": arn},
            {"name": "MLFLOW_EXPERIMENT_NAME", "value": experiment}]
