// Cluster, inspect and group/node shapes: every one is the server's OpenAPI type (generated
// into src/api/generated/ at build time); none is named by hand here.
import type { Schemas } from "../../api/client";

export type Group = Schemas["GroupOut"];
export type Node = Schemas["NodeOut"];
export type CapacityType = Schemas["CapacityType"];
export type ClusterList = Schemas["ClusterListOut"];
export type ManagedCluster = Schemas["ManagedClusterOut"];
export type ClusterDetail = Schemas["ClusterStatusOut"];
export type ClusterSpec = Schemas["ClusterSpec"];
export type HyperpodGroup = Schemas["HyperPodGroupStatusOut"];
export type Dependencies = NonNullable<ClusterDetail["dependencies"]>;
export type Dependency = Schemas["DependencyOut"];
export type Drift = Schemas["DriftOut"];
export type Zone = Schemas["ZoneOut"];
export type InstanceType = Schemas["InstanceTypeOut"];
export type Quota = Schemas["QuotaOut"];
export type TrainingPlan = Schemas["TrainingPlanOut"];
export type PreflightFinding = Schemas["Finding"];
export type ClusterPlan = Schemas["ClusterPlanOut"];
export type ClusterRequest = Schemas["ClusterIn"];
export type NewGroupRequest = Schemas["NewGroupIn"];

/** The decisions a created cluster was made with (an imported one has none). */
export function specOf(c: ClusterDetail): ClusterSpec | null {
  return c.spec && isSpec(c.spec) ? c.spec : null;
}

function isSpec(spec: NonNullable<ClusterDetail["spec"]>): spec is ClusterSpec {
  return "name" in spec;
}

export const CAPACITY_TYPES: { value: CapacityType; label: string; description: string }[] = [
  { value: "on-demand", label: "On-Demand", description: "Pay by the hour; capacity as EC2 offers it." },
  { value: "spot", label: "Spot", description: "Cheaper, can be reclaimed; not for elastic training." },
  { value: "training-plan", label: "Training plan", description: "Reserved capacity in the plan's AZ." },
];

export const clusterKey = (name: string) => ["cluster", name] as const;
export const groupsKey = (name: string) => ["cluster", name, "groups"] as const;
export const nodesKey = (name: string) => ["cluster", name, "nodes"] as const;

export function formatPrice(p: number | null | undefined): string {
  return p == null ? "-" : `$${p.toFixed(2)}/h`;
}
