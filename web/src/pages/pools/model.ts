// Warm pool shapes are the server's OpenAPI types (src/api/generated/); none is named by hand.
import type { StatusIndicatorProps } from "@cloudscape-design/components/status-indicator";
import type { Schemas } from "../../api/client";
import { problemOf } from "../../api/problem";

export type Pool = Schemas["PoolOut"];
export type PoolPod = Schemas["PoolPodOut"];
export type PoolRequest = Schemas["PoolIn"];

export const poolsKey = (cluster: string) => ["pools", cluster] as const;
export const poolKey = (cluster: string, name: string) => ["pool", cluster, name] as const;

export const poolsPath = (cluster: string) => `/clusters/${cluster}/pools`;
export const poolPath = (cluster: string, name: string) => `${poolsPath(cluster)}/${name}`;

/** A pod's state in the pool: leaving (being deleted), draining from an endpoint, assigned to
 * one, or free (the only pods a scale-in may remove). */
export function podState(p: PoolPod): { text: string; type: StatusIndicatorProps.Type } {
  if (p.leaving) return { text: "leaving", type: "stopped" };
  if (p.draining) return { text: `draining from ${p.draining}`, type: "in-progress" };
  if (p.assigned) return { text: `assigned to ${p.assigned}`, type: "success" };
  return { text: "free", type: "info" };
}

// The pool's refusals, in words a person acts on; the server's detail and hint follow.
const REFUSALS: Record<string, string> = {
  pool_pods_assigned: "Pods of this pool still serve an endpoint",
  pool_scale_unsafe: "Kubernetes might remove a serving pod instead of a free one",
  pool_too_small: "The pool has too few free Ready pods",
  insufficient_gpus: "Not enough free GPUs on the instance group",
};

/** The alert header for a refused pool change: what the refusal means, or `fallback`. */
export function refusalHeader(error: unknown, fallback: string): string {
  return REFUSALS[problemOf(error).code] ?? fallback;
}
