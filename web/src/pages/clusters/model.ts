// Cluster, inspect and group/node shapes. Groups and nodes are typed by the OpenAPI document;
// the cluster and inspect endpoints answer free-form objects there, so their fields are named
// here (from the services that build them) and read defensively.
import type { Schemas } from "../../api/client";

export type Group = Schemas["GroupOut"];
export type Node = Schemas["NodeOut"];
export type CapacityType = Schemas["CapacityType"];

export interface ManagedCluster {
  name: string;
  region: string;
  origin: string;
  state: string;
  eks_cluster_name: string | null;
  hyperpod_cluster_name: string | null;
  operation_id: string | null;
}

export interface ClusterList {
  managed: ManagedCluster[];
}

export interface HyperpodGroup {
  name: string;
  instance_type: string;
  target: number;
  current: number;
  status: string;
}

export interface ClusterDetail extends ManagedCluster {
  spec: { availability_zone?: string; instance_type?: string; count?: number; capacity_type?: string } | null;
  eks: { status?: string; version?: string } | null;
  hyperpod: { status?: string; node_recovery?: string; failure_message?: string | null; instance_groups?: HyperpodGroup[] } | null;
  addons: Record<string, string> | null;
  dependencies?: Record<string, Dependency> | { error: { code?: string; message?: string } } | null;
  facts: { network?: { compute_subnet?: string; vpc_id?: string }; bucket?: string } | null;
  operation: { id: string; kind: string; status: string } | null;
}

export interface Dependency {
  kind: string;
  installed: boolean;
  version: string | null;
  healthy: boolean | null;
}

export interface Zone {
  name: string;
  id: string;
  state: string;
  region: string;
}

export interface InstanceType {
  name: string;
  vcpu: number;
  memory_gib: number;
  gpu_model: string | null;
  gpu_count: number;
  gpu_memory_gib: number | null;
  efa_interfaces: number;
  price_per_hour: number | null;
  accelerated: boolean;
  offered_in: string[];
}

export interface Quota {
  instance_type: string;
  limit: number | null;
  in_use: number;
  available: number | null;
}

export interface TrainingPlan {
  arn: string;
  name?: string;
  status?: string;
  instance_type: string | null;
  availability_zone: string | null;
  total_instances: number | null;
  available_instances: number | null;
  end_time?: string | null;
}

export interface PreflightFinding {
  code: string;
  severity: string;
  message: string;
  hint?: string | null;
}

export interface ClusterPlan {
  cluster: string;
  region: string;
  kubernetes_version?: string;
  steps: string[];
  network?: { vpc_cidr?: string; compute?: [string, string] };
  instance_group?: { name: string; instance_type: string; count: number; capacity_type: string; ebs_gb?: number; deep_health_checks?: string[] };
  node_recovery?: string;
  dependencies?: { name: string; kind: string; version: string }[];
  storage?: { bucket?: string; mount?: string };
  notes?: string[];
  preflight?: PreflightFinding[];
  blocked?: boolean;
  exists?: boolean;
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
