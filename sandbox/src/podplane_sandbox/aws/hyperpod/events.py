"""HyperPod cluster events (ListClusterEvents / DescribeClusterEvent).

With continuous provisioning a cluster is InService before all its instances exist, and what
goes wrong while HyperPod keeps provisioning (no capacity for a group) is reported as events,
not as the cluster's FailureMessage. botocore documents both operations as "only supported
when the NodeProvisioningMode is set to Continuous".

Shapes from botocore's sagemaker model (data/sagemaker/2017-07-24/service-2.json):
ClusterEventSummary (EventId, ClusterArn, ClusterName, InstanceGroupName, InstanceId,
ResourceType Cluster | InstanceGroup | Instance, EventTime, Description, EventLevel Info | Warn |
Error, OperationId) and ClusterEventDetail (the same plus EventDetails.EventMetadata, a union of
Cluster / InstanceGroup / Instance metadata, each with a FailureMessage). Requests are checked
against the model's constraints by the protocol layer (MaxResults 1-100, the enums, the NodeId
and EventId patterns); a NextToken this responder did not issue is refused here. Events are
newest first unless SortOrder is Ascending (the model: "the default is Descending").

What is recorded: cluster creation and its outcome (InService, or Failed with its message),
instance provisioning, capacity shortfalls, a node's failed health check (the health-monitoring
agent's verdict, Warn) and its reboot or replacement, by hand or by HyperPod's own recovery.
"""

from __future__ import annotations

from typing import Any

from podplane_sandbox.aws.base import paginate
from podplane_sandbox.aws.errors import sm_not_found, sm_validation
from podplane_sandbox.aws.hyperpod.plans import PlansMixin

LEVELS = ("Info", "Warn", "Error")
METADATA_KEY = {"Cluster": "Cluster", "InstanceGroup": "InstanceGroup", "Instance": "Instance"}


class EventsMixin(PlansMixin):
    def event(self, cluster: dict[str, Any], level: str, description: str,
              group: str | None = None, instance: str | None = None,
              at: float | None = None, failure: str | None = None) -> None:
        """Record an event of a continuous-provisioning cluster (others have none);
        `failure`: the FailureMessage DescribeClusterEvent's metadata carries."""
        if cluster.get("NodeProvisioningMode") != "Continuous":
            return
        h = self.w.hex_id
        kind = "Instance" if instance else "InstanceGroup" if group else "Cluster"
        events = self.table("events").setdefault(cluster["ClusterName"], [])
        event = {"_seq": len(events), "EventId": f"{h(8)}-{h(4)}-{h(4)}-{h(4)}-{h(12)}",
                 "ClusterArn": cluster["ClusterArn"], "ClusterName": cluster["ClusterName"],
                 "ResourceType": kind, "EventTime": self.w.now() if at is None else at,
                 "Description": description, "EventLevel": level}
        if group:
            event["InstanceGroupName"] = group
        if instance:
            event["InstanceId"] = instance
        if failure:
            event["_failure"] = failure
        events.append(event)

    def _events_of(self, name: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        cluster = self.get_cluster(name)
        if cluster.get("NodeProvisioningMode") != "Continuous":
            raise sm_validation("Cluster events are only supported when the cluster's "
                                "NodeProvisioningMode is Continuous.")
        return cluster, list(self.table("events").get(cluster["ClusterName"], []))

    def list_cluster_events(self, p: dict[str, Any]) -> dict[str, Any]:
        _, events = self._events_of(p["ClusterName"])
        token = p.get("NextToken")
        if token and not (str(token).isdigit() and int(token) < max(len(events), 1)):
            raise sm_validation(f"The pagination token {token!r} is not valid.")
        wanted = {"InstanceGroupName": p.get("InstanceGroupName"),
                  "InstanceId": p.get("NodeId"), "ResourceType": p.get("ResourceType"),
                  "OperationId": p.get("OperationId")}
        events = [e for e in events if all(v is None or e.get(k) == v
                                           for k, v in wanted.items())]
        if p.get("EventTimeAfter") is not None:
            events = [e for e in events if e["EventTime"] > float(p["EventTimeAfter"])]
        if p.get("EventTimeBefore") is not None:
            events = [e for e in events if e["EventTime"] < float(p["EventTimeBefore"])]
        events.sort(key=lambda e: (e["EventTime"], e["_seq"]),
                    reverse=p.get("SortOrder") != "Ascending")
        page, nxt = paginate(events, p, "MaxResults", "NextToken")
        return {"Events": [_public(e) for e in page], **({"NextToken": nxt} if nxt else {})}

    def describe_cluster_event(self, p: dict[str, Any]) -> dict[str, Any]:
        _, events = self._events_of(p["ClusterName"])
        for event in events:
            if event["EventId"] == p["EventId"]:
                detail = _public(event)
                if event.get("_failure"):
                    key = METADATA_KEY[event["ResourceType"]]
                    detail["EventDetails"] = {"EventMetadata": {
                        key: {"FailureMessage": event["_failure"]}}}
                return {"EventDetails": detail}
        raise sm_not_found(f"Event {p['EventId']} not found in cluster {p['ClusterName']}")


def _public(event: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in event.items() if not k.startswith("_")}
