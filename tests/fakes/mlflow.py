"""MlflowPort in memory: tracking servers by name, Created at once (the sandbox runs the real
lifecycle), and runs recorded per experiment by `log_run`."""

from __future__ import annotations

from typing import Any

from tests.fakes.base import FakePort

Shape = dict[str, Any]


class FakeMlflow(FakePort):
    service = "sagemaker"

    def __init__(self) -> None:
        super().__init__()
        self.servers: dict[str, Shape] = {}
        self.experiments: dict[str, list[Shape]] = {}

    async def create_tracking_server(self, **params: Any) -> Shape:
        self._enter("create_mlflow_tracking_server", **params)
        name = params["TrackingServerName"]
        arn = f"arn:aws:sagemaker:us-west-2:123456789012:mlflow-tracking-server/{name}"
        self.servers[name] = {**params, "TrackingServerArn": arn,
                              "TrackingServerStatus": "Created", "IsActive": "Active",
                              "TrackingServerUrl": f"https://t-{name}.experiments.test"}
        return {"TrackingServerArn": arn}

    async def describe_tracking_server(self, name: str) -> Shape | None:
        self._enter("describe_mlflow_tracking_server", TrackingServerName=name)
        found = self.servers.get(name)
        return dict(found) if found else None

    async def update_tracking_server(self, **params: Any) -> Shape:
        self._enter("update_mlflow_tracking_server", **params)
        found = self.servers[params["TrackingServerName"]]
        found.update({k: v for k, v in params.items() if k != "TrackingServerName"})
        return {"TrackingServerArn": found["TrackingServerArn"]}

    async def delete_tracking_server(self, name: str) -> Shape:
        self._enter("delete_mlflow_tracking_server", TrackingServerName=name)
        if name not in self.servers:
            raise self.refuse("delete_mlflow_tracking_server", "ResourceNotFound", name)
        return {"TrackingServerArn": self.servers.pop(name)["TrackingServerArn"]}

    def log_run(self, experiment: str, run: Shape) -> None:
        self.experiments.setdefault(experiment, []).insert(0, run)

    async def runs_of(self, server_arn: str, experiment: str,
                      max_results: int = 5) -> tuple[Shape | None, list[Shape]]:
        self._enter("get_runs", server=server_arn, experiment=experiment)
        if experiment not in self.experiments:
            return None, []
        return ({"experiment_id": "1", "name": experiment},
                self.experiments[experiment][:max_results])
