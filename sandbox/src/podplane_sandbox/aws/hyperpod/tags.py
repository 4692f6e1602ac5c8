"""SageMaker AddTags / ListTags / DeleteTags for the resources we emulate (others go to moto)."""

from __future__ import annotations

from typing import Any

from podplane_sandbox.aws.base import paginate
from podplane_sandbox.aws.hyperpod.clusters import ClustersMixin

TAG_ACTIONS = {"AddTags", "ListTags", "DeleteTags"}


class TagsMixin(ClustersMixin):
    def accepts(self, action: str, params: dict[str, Any]) -> bool:
        if action in TAG_ACTIONS:
            return self.owns_arn(str(params.get("ResourceArn", "")))
        return self.handles(action)

    def owns_arn(self, arn: str) -> bool:
        arns = {c["ClusterArn"] for c in self.table("clusters").values()}
        arns |= {p["TrainingPlanArn"] for p in self.table("plans").values()}
        arns |= {m["TrackingServerArn"] for m in  # aws/mlflow.py keeps them
                 self.w.service_state("sagemaker-mlflow").get("tracking_servers", {}).values()}
        return arn in arns

    def _tags(self, arn: str) -> list[dict[str, str]]:
        tags: list[dict[str, str]] = self.table("tags").setdefault(arn, [])
        return tags

    def add_tags(self, p: dict[str, Any]) -> dict[str, Any]:
        tags = self._tags(p["ResourceArn"])
        new = {t["Key"]: t["Value"] for t in p["Tags"]}
        tags[:] = [t for t in tags if t["Key"] not in new] + [
            {"Key": k, "Value": v} for k, v in new.items()]
        self.w.record("sagemaker", "AddTags", p["ResourceArn"], keys=sorted(new))
        return {"Tags": tags}

    def list_tags(self, p: dict[str, Any]) -> dict[str, Any]:
        page, nxt = paginate(self._tags(p["ResourceArn"]), p, "MaxResults", "NextToken")
        return {"Tags": page, **({"NextToken": nxt} if nxt else {})}

    def delete_tags(self, p: dict[str, Any]) -> dict[str, Any]:
        tags = self._tags(p["ResourceArn"])
        tags[:] = [t for t in tags if t["Key"] not in set(p["TagKeys"])]
        self.w.record("sagemaker", "DeleteTags", p["ResourceArn"], keys=sorted(p["TagKeys"]))
        return {}
