// What each role may do, to hide or disable controls with the reason. This mirrors the
// effects the services declare (viewer reads, operator creates and changes, admin destroys and
// manages tokens); the server enforces them whatever the console shows.
import type { Role } from "./session";

const RANK: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };

export type Action =
  | "token.list"
  | "token.create"
  | "token.revoke"
  | "audit.list"
  | "operation.list"
  | "operation.retry_step"
  | "operation.cancel"
  | "cluster.list"
  | "cluster.create"
  | "cluster.delete"
  | "instance_group.add"
  | "instance_group.scale"
  | "instance_group.scale_down"
  | "instance_group.delete"
  | "node.reboot"
  | "node.replace"
  | "node.delete"
  | "job.submit"
  | "job.cancel"
  | "job.delete"
  | "endpoint.create"
  | "endpoint.scale"
  | "endpoint.update"
  | "endpoint.delete"
  | "endpoint.invoke"
  | "pool.create"
  | "pool.scale"
  | "pool.assign"
  | "pool.unassign"
  | "pool.delete"
  | "model.download"
  | "space.list"
  | "space.get"
  | "space.logs"
  | "space.files"
  | "space.open"
  | "space.create"
  | "space.state"
  | "space.delete"
  | "space.delete_home"
  | "space_template.list"
  | "space_template.set";

export const NEEDS: Record<Action, Role> = {
  "token.list": "admin",
  "token.create": "admin",
  "token.revoke": "admin",
  "audit.list": "viewer",
  "operation.list": "viewer",
  "operation.retry_step": "operator",
  "operation.cancel": "operator",
  "cluster.list": "viewer",
  "cluster.create": "operator",
  "cluster.delete": "admin",
  "instance_group.add": "operator",
  "instance_group.scale": "operator",
  // Fewer nodes terminates instances: a destroy.
  "instance_group.scale_down": "admin",
  "instance_group.delete": "admin",
  "node.reboot": "operator",
  "node.replace": "admin",
  "node.delete": "admin",
  "job.submit": "operator",
  "job.cancel": "operator",
  "job.delete": "admin",
  "endpoint.create": "operator",
  "endpoint.scale": "operator",
  "endpoint.update": "operator",
  "endpoint.delete": "admin",
  // A read, but it spends GPU time.
  "endpoint.invoke": "operator",
  "pool.create": "operator",
  "pool.scale": "operator",
  "pool.assign": "operator",
  // pods=0 removes the endpoint: a destroy, as deleting an endpoint is.
  "pool.unassign": "admin",
  "pool.delete": "admin",
  "model.download": "operator",
  "space.list": "viewer",
  "space.get": "viewer",
  "space.logs": "viewer",
  // A read, but through the space's own server, as the space.
  "space.files": "operator",
  // A link that runs code as the space, on the space's own host (docs/spaces.md).
  "space.open": "operator",
  "space.create": "operator",
  // A stop keeps the home volume.
  "space.state": "operator",
  "space.delete": "operator",
  // delete_home=true destroys the files in the home volume.
  "space.delete_home": "admin",
  "space_template.list": "viewer",
  "space_template.set": "admin",
};

export function allows(role: string, action: Action): boolean {
  const have = RANK[role as Role] ?? -1;
  return have >= RANK[NEEDS[action]];
}

/** Why a control is disabled, or undefined when the role may use it. */
export function deniedReason(role: string, action: Action): string | undefined {
  if (allows(role, action)) return undefined;
  return `Needs the ${NEEDS[action]} role; you are ${role}.`;
}
