"""The SageMaker MLflow port: tracking server operations (SageMaker API Reference,
CreateMlflowTrackingServer ... CreatePresignedMlflowTrackingServerUrl) and the few MLflow
REST API 2.0 reads the job view needs (experiments/get-by-name, runs/search), sent to the
tracking server as the sagemaker-mlflow plugin does. Inputs and results are those APIs' shapes."""

from __future__ import annotations

from typing import Any, Protocol

from podplane.cloud.ports_aws import Shape


class MlflowPort(Protocol):
    async def create_tracking_server(self, **params: Any) -> Shape: ...
    async def describe_tracking_server(self, name: str) -> Shape | None: ...
    async def update_tracking_server(self, **params: Any) -> Shape: ...
    async def delete_tracking_server(self, name: str) -> Shape: ...
    async def runs_of(self, server_arn: str, experiment: str,
                      max_results: int = 5) -> tuple[Shape | None, list[Shape]]:
        """The experiment (None when it does not exist) and its newest runs."""
        ...
