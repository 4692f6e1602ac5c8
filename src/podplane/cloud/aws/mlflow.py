"""MlflowPort over boto3 and the tracking server's REST API.

SageMaker API: Create/Describe/Update/DeleteMlflowTrackingServer (an unknown name answers
ResourceNotFound, which `describe_tracking_server` reads as None).

Tracking reads go where the sagemaker-mlflow plugin sends them (aws/sagemaker-mlflow,
sagemaker_mlflow/mlflow_sagemaker_helpers.py and auth.py): `https://<region>.experiments.
sagemaker.aws` (a custom endpoint when one is configured: here AWS_ENDPOINT_URL, the sandbox),
each request signed with SigV4 for the service `sagemaker-mlflow` and carrying the header
`x-mlflow-sm-tracking-server-arn`. Paths and bodies: MLflow REST API 2.0
(mlflow.org/docs/latest/rest-api.html): GET experiments/get-by-name, POST runs/search.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any
from urllib.parse import urlencode

import httpx
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest

from podplane.cloud.aws.caller import AwsCaller
from podplane.cloud.ports_aws import Shape
from podplane.domain.errors import CloudError

SIGNING_NAME = "sagemaker-mlflow"
ARN_HEADER = "x-mlflow-sm-tracking-server-arn"
API = "/api/2.0/mlflow"


class MlflowAdapter:
    def __init__(self, caller: AwsCaller) -> None:
        self.aws = caller

    async def create_tracking_server(self, **params: Any) -> Shape:
        return await self.aws.call("sagemaker", "create_mlflow_tracking_server", **params)

    async def describe_tracking_server(self, name: str) -> Shape | None:
        return await self.aws.maybe("sagemaker", "describe_mlflow_tracking_server",
                                    TrackingServerName=name)

    async def update_tracking_server(self, **params: Any) -> Shape:
        return await self.aws.call("sagemaker", "update_mlflow_tracking_server", **params)

    async def delete_tracking_server(self, name: str) -> Shape:
        return await self.aws.call("sagemaker", "delete_mlflow_tracking_server",
                                   TrackingServerName=name)

    async def runs_of(self, server_arn: str, experiment: str,
                      max_results: int = 5) -> tuple[Shape | None, list[Shape]]:
        found = await self._rest(server_arn, "GET", "/experiments/get-by-name",
                                 {"experiment_name": experiment})
        if found is None:
            return None, []
        exp = dict(found.get("experiment") or {})
        runs = await self._rest(server_arn, "POST", "/runs/search", body={
            "experiment_ids": [exp.get("experiment_id")], "max_results": max_results,
            "order_by": ["attributes.start_time DESC"]}) or {}
        return exp, list(runs.get("runs") or [])

    def _base(self) -> str:
        return (self.aws.endpoint_url or
                f"https://{self.aws.region}.experiments.sagemaker.aws").rstrip("/")

    async def _rest(self, arn: str, method: str, path: str, query: dict[str, str] | None = None,
                    body: Shape | None = None) -> Shape | None:
        """One signed call; None for MLflow's RESOURCE_DOES_NOT_EXIST."""
        url = self._base() + API + path + (f"?{urlencode(query)}" if query else "")
        data = json.dumps(body).encode() if body is not None else None
        request = AWSRequest(method=method, url=url, data=data, headers={
            ARN_HEADER: arn, **({"Content-Type": "application/json"} if data else {})})
        credentials = await asyncio.to_thread(self.aws.session.get_credentials)
        SigV4Auth(credentials, SIGNING_NAME, self.aws.region).add_auth(request)
        try:
            async with httpx.AsyncClient(timeout=15) as client:
                answer = await client.request(method, url, content=data,
                                              headers=dict(request.headers.items()))
        except httpx.HTTPError as err:
            raise CloudError(f"MLflow tracking server unreachable: {err}",
                             code="cloud_unreachable", retryable=True) from err
        payload = _json(answer)
        if answer.status_code == 404 or payload.get("error_code") == "RESOURCE_DOES_NOT_EXIST":
            return None
        if answer.status_code >= 400:
            raise CloudError(f"MLflow {path}: {payload.get('error_code', answer.status_code)}"
                             f" {payload.get('message', '')}".strip(),
                             code="access_denied" if answer.status_code == 403 else "cloud_error",
                             retryable=False)
        return payload


def _json(answer: httpx.Response) -> Shape:
    try:
        value = answer.json()
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
