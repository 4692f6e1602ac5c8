// Reboot, replace or delete a node. The modal names the consequences, with the server's own
// warning from a dry run; replace and delete send confirm=true only from here.
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../../api/client";
import { ProblemAlert } from "../../components/ProblemAlert";
import { ActionModal, useRun } from "./GroupModals";
import type { Node } from "./model";
import type { Change } from "./mutation";

export type NodeAction = "reboot" | "replace" | "delete";

const CONSEQUENCES: Record<NodeAction, string> = {
  reboot:
    "The instance restarts: pods on it stop and are rescheduled, training jobs on it restart from their last checkpoint. Instance storage is kept.",
  replace:
    "The instance is terminated and a new one takes its place: data on its instance storage (local NVMe, /opt/dlami/nvme) is lost. Pods on it are evicted. EBS and shared storage stay.",
  delete:
    "The instance is terminated and not replaced: its group's count drops by one. Data on its instance storage is lost and pods on it are evicted.",
};

const PAST: Record<NodeAction, string> = { reboot: "rebooted", replace: "replaced", delete: "deleted" };
const VERB: Record<NodeAction, string> = { reboot: "Reboot", replace: "Replace", delete: "Delete" };

interface Props {
  cluster: string;
  node: Node;
  action: NodeAction;
  onClose: () => void;
  onDone: (opId: string | null, label: string) => void;
}

export function NodeActionModal({ cluster, node, action, onClose, onDone }: Props) {
  const path = { cluster, node: node.id };
  const plan = useQuery({
    queryKey: ["node-plan", cluster, node.id, action],
    queryFn: async () => {
      const query = { dry_run: true };
      const call =
        action === "delete"
          ? api.DELETE("/api/v1/clusters/{cluster}/nodes/{node}", { params: { path, query } })
          : action === "replace"
            ? api.POST("/api/v1/clusters/{cluster}/nodes/{node}/replace", { params: { path, query } })
            : api.POST("/api/v1/clusters/{cluster}/nodes/{node}/reboot", { params: { path, query } });
      return (await unwrap(call)) as Change;
    },
  });
  const run = useRun(onDone, `${action} ${node.id}`, () => {
    const header = { "Idempotency-Key": run.key };
    if (action === "reboot") return api.POST("/api/v1/clusters/{cluster}/nodes/{node}/reboot", { params: { path, header } });
    const query = { confirm: true };
    if (action === "replace") return api.POST("/api/v1/clusters/{cluster}/nodes/{node}/replace", { params: { path, query, header } });
    return api.DELETE("/api/v1/clusters/{cluster}/nodes/{node}", { params: { path, query, header } });
  });
  const answer = plan.data?.plan;
  const warning = answer && "warning" in answer ? answer.warning : undefined;
  return (
    <ActionModal header={`${VERB[action]} node ${node.id}?`} action={`${VERB[action]} node`} busy={run.busy} onClose={onClose} onAction={run.go}>
      <Box variant="p">
        {node.instance_group ?? "?"} · {node.instance_type ?? "?"} · {node.gpus.allocated} GPU(s) allocated now.
      </Box>
      <Box variant="p">{CONSEQUENCES[action]}</Box>
      {warning && <Alert type="warning" header="The control plane says">{warning}</Alert>}
      {run.error !== null && <ProblemAlert error={run.error} header={`The node was not ${PAST[action]}`} />}
    </ActionModal>
  );
}
