// A diagnosis's verdict (docs/diagnostics.md): the server's OpenAPI types, read through the
// generated client. A subject names what is diagnosed; each has its own read-only route.
import { api, unwrap, type Schemas } from "../../api/client";

export type Verdict = Schemas["VerdictOut"];
export type VerdictFinding = Schemas["VerdictFindingOut"];
export type SuggestedCall = Schemas["SuggestedCallOut"];

export type Subject =
  | { kind: "node"; cluster: string; node: string }
  | { kind: "operation"; id: string }
  | { kind: "job"; cluster: string; job: string };

export const diagnosisKey = (s: Subject) => ["diagnosis", s] as const;

export function subjectName(s: Subject): string {
  if (s.kind === "node") return `node ${s.node}`;
  if (s.kind === "operation") return `operation ${s.id}`;
  return `job ${s.job}`;
}

export function fetchVerdict(s: Subject): Promise<Verdict> {
  if (s.kind === "node") {
    const path = { cluster: s.cluster, node: s.node };
    return unwrap(api.GET("/api/v1/clusters/{cluster}/diagnostics/nodes/{node}", { params: { path } }));
  }
  if (s.kind === "operation") {
    return unwrap(api.GET("/api/v1/operations/{op_id}/diagnosis", { params: { path: { op_id: s.id } } }));
  }
  const path = { cluster: s.cluster, job: s.job };
  return unwrap(api.GET("/api/v1/clusters/{cluster}/diagnostics/jobs/{job}", { params: { path } }));
}
