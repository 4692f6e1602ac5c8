// The suggested calls the console can make itself, each through the generated client with the
// arguments the diagnosis gave (never rebuilt from the page), and the role it needs.
import { api } from "../../api/client";
import type { Action } from "../../permissions";
import type { SuggestedCall } from "./model";

type Call = () => Promise<{ data?: unknown; error?: unknown; response: Response }>;

export interface Performable {
  permission: Action;
  /** What the button and the confirmation say: "Reboot node i-0abc". */
  verb: string;
  /** The call, with the modal's Idempotency-Key where the route takes one. */
  call: (key: string) => Call;
}

function text(call: SuggestedCall, name: string): string {
  return String(call.arguments[name] ?? "");
}

/** The mutation a suggested call names, or null when the console does not make it itself. */
export function performable(call: SuggestedCall): Performable | null {
  const confirm = call.arguments.confirm === true;
  if (call.tool === "node_reboot" || call.tool === "node_replace") {
    const path = { cluster: text(call, "cluster"), node: text(call, "node") };
    if (call.tool === "node_reboot") {
      return {
        permission: "node.reboot",
        verb: `Reboot node ${path.node}`,
        call: (key) => () =>
          api.POST("/api/v1/clusters/{cluster}/nodes/{node}/reboot", { params: { path, header: { "Idempotency-Key": key } } }),
      };
    }
    return {
      permission: "node.replace",
      verb: `Replace node ${path.node}`,
      call: (key) => () =>
        api.POST("/api/v1/clusters/{cluster}/nodes/{node}/replace", {
          params: { path, query: { confirm }, header: { "Idempotency-Key": key } },
        }),
    };
  }
  if (call.tool === "operation_retry_step") {
    const path = { op_id: text(call, "operation_id"), step: text(call, "step") };
    return {
      permission: "operation.retry_step",
      verb: `Retry step ${path.step}`,
      call: () => () => api.POST("/api/v1/operations/{op_id}/steps/{step}/retry", { params: { path, query: { confirm } } }),
    };
  }
  return null;
}

/** The call as an agent would write it: `node_reboot(cluster="a", node="i-1")`. */
export function callText(call: SuggestedCall): string {
  const args = Object.entries(call.arguments).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
  return `${call.tool}(${args.join(", ")})`;
}
