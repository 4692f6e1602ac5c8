"""Training plans (reserved capacity bound to one AZ). MLflow tracking servers: aws/mlflow.py."""

from __future__ import annotations

from typing import Any, cast

from podplane.domain.catalog import CATALOG
from podplane_sandbox.aws.base import paginate
from podplane_sandbox.aws.errors import sm_in_use, sm_not_found, sm_validation
from podplane_sandbox.aws.hyperpod.node_api import NodeApiMixin
from podplane_sandbox.aws.world import AZ_IDS, AZS


class PlansMixin(NodeApiMixin):
    def search_training_plan_offerings(self, p: dict[str, Any]) -> dict[str, Any]:
        itype = p.get("InstanceType")
        if not itype or not p.get("InstanceCount"):
            raise sm_validation("InstanceType and InstanceCount are required.")
        hours = int(p.get("DurationHours") or 24)
        start = max(self.w.now(), float(p.get("StartTimeAfter") or 0))
        offers = []
        for az in self.w.rng.sample(list(AZS), 2):
            oid = "tpo-" + self.w.hex_id(16)  # model pattern: [a-z0-9\-]+
            price = (CATALOG[itype].price_per_hour if itype in CATALOG else 10.0) * 0.55
            offer = {"TrainingPlanOfferingId": oid,
                     "TargetResources": p.get("TargetResources") or ["hyperpod-cluster"],
                     "DurationHours": hours, "DurationMinutes": 0,
                     "UpfrontFee": f"{price * hours * p['InstanceCount']:.2f}",
                     "CurrencyCode": "USD",
                     "ReservedCapacityOfferings": [{
                         "InstanceType": itype, "InstanceCount": p["InstanceCount"],
                         "AvailabilityZone": az, "DurationHours": hours, "DurationMinutes": 0,
                         "StartTime": start, "EndTime": start + hours * 3600}]}
            self.table("offerings")[oid] = offer
            offers.append(offer)
        return {"TrainingPlanOfferings": offers}

    def create_training_plan(self, p: dict[str, Any]) -> dict[str, Any]:
        offer = self.table("offerings").get(p["TrainingPlanOfferingId"])
        if offer is None:
            raise sm_not_found(f"Training plan offering {p['TrainingPlanOfferingId']} not found")
        if p["TrainingPlanName"] in self.table("plans"):
            raise sm_in_use(f"Training plan {p['TrainingPlanName']} already exists")
        rc = offer["ReservedCapacityOfferings"][0]
        arn = self.w.arn("sagemaker", f"training-plan/{p['TrainingPlanName']}")
        plan = {"TrainingPlanArn": arn, "TrainingPlanName": p["TrainingPlanName"],
                "Status": "Scheduled", "DurationHours": rc["DurationHours"],
                "DurationMinutes": 0, "StartTime": rc["StartTime"], "EndTime": rc["EndTime"],
                "UpfrontFee": offer["UpfrontFee"], "CurrencyCode": "USD",
                "TotalInstanceCount": rc["InstanceCount"], "TargetResources":
                offer["TargetResources"], "_az": rc["AvailabilityZone"],
                "_type": rc["InstanceType"]}
        self.table("plans")[p["TrainingPlanName"]] = plan
        self.table("tags")[arn] = list(p.get("Tags", []))
        self.w.record("sagemaker", "CreateTrainingPlan", p["TrainingPlanName"],
                      offering=p["TrainingPlanOfferingId"])
        return {"TrainingPlanArn": arn}

    def _plan(self, name_or_arn: str) -> dict[str, Any]:
        plan = self.table("plans").get(name_or_arn.rsplit("/", 1)[-1])
        if plan is None:
            raise sm_not_found(f"Training plan {name_or_arn} not found")
        return cast("dict[str, Any]", plan)

    def describe_training_plan(self, p: dict[str, Any]) -> dict[str, Any]:
        return self._plan_view(self._plan(p["TrainingPlanName"]))

    def list_training_plans(self, p: dict[str, Any]) -> dict[str, Any]:
        plans = [self._plan_view(pl) for pl in self.table("plans").values()]
        page, nxt = paginate(plans, p, "MaxResults", "NextToken")
        return {"TrainingPlanSummaries": page, **({"NextToken": nxt} if nxt else {})}

    def _plan_view(self, plan: dict[str, Any]) -> dict[str, Any]:
        now = self.w.now()
        status = "Scheduled" if now < plan["StartTime"] else (
            "Active" if now < plan["EndTime"] else "Expired")
        used = self.plan_usage(plan["TrainingPlanArn"])
        view = {**plan, "Status": status, "InUseInstanceCount": used,
                "AvailableInstanceCount": plan["TotalInstanceCount"] - used,
                "ReservedCapacitySummaries": [{
                    "ReservedCapacityArn": plan["TrainingPlanArn"].replace(
                        "training-plan/", "reserved-capacity/"),
                    "InstanceType": plan["_type"], "TotalInstanceCount":
                    plan["TotalInstanceCount"], "Status": status,
                    "AvailabilityZone": plan["_az"], "AvailabilityZoneId": AZ_IDS[plan["_az"]],
                    "DurationHours": plan["DurationHours"], "DurationMinutes": 0,
                    "StartTime": plan["StartTime"], "EndTime": plan["EndTime"]}]}
        return view

    def plan_usage(self, arn: str) -> int:
        return sum(1 for nodes in self.table("nodes").values() for n in nodes.values()
                   if n.get("_plan") == arn and n["Status"] != "ShuttingDown")

    def bind_plan(self, cluster: dict[str, Any], group: dict[str, Any]) -> None:
        """A group on a training plan runs in the plan's AZ and within its instance count."""
        arn = group.get("TrainingPlanArn")
        if not arn:
            return
        plan = self._plan_view(self._plan(arn))
        if plan["_type"] != group["InstanceType"]:
            raise sm_validation(f"Instance type {group['InstanceType']} does not match training "
                                f"plan {plan['TrainingPlanName']} ({plan['_type']}).")
        if plan["Status"] == "Expired":
            raise sm_validation(f"Training plan {plan['TrainingPlanName']} has expired.")
        if group["TargetCount"] > plan["AvailableInstanceCount"]:
            raise sm_validation(f"Training plan {plan['TrainingPlanName']} has "
                                f"{plan['AvailableInstanceCount']} instances available; "
                                f"{group['TargetCount']} requested.")
        azs = self.group_azs(cluster, group)
        if plan["_az"] not in azs:
            raise sm_validation(f"Training plan {plan['TrainingPlanName']} is in {plan['_az']}; "
                                f"the instance group's subnets are in {', '.join(azs)}.")
        group["_plan_az"] = plan["_az"]
        group["TrainingPlanStatus"] = plan["Status"]
