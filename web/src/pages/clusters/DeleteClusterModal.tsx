// Delete a cluster (admin): names what goes, then follows the operation on its own page,
// since the cluster page disappears when the operation forgets the cluster.
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import { api } from "../../api/client";
import { ProblemAlert } from "../../components/ProblemAlert";
import { navigate } from "../../router";
import { ActionModal, useRun } from "./GroupModals";
import type { ClusterDetail } from "./model";

export function DeleteClusterModal({ cluster, onClose }: { cluster: ClusterDetail; onClose: () => void }) {
  const run = useRun(
    (id) => navigate(id ? `/operations/${id}` : "/clusters"),
    `delete cluster ${cluster.name}`,
    () =>
      api.DELETE("/api/v1/clusters/{cluster}", {
        params: { path: { cluster: cluster.name }, query: { confirm: true }, header: { "Idempotency-Key": run.key } },
      }),
  );
  const created = cluster.origin === "created";
  const groups = cluster.hyperpod?.instance_groups ?? [];
  const nodes = groups.reduce((n, g) => n + (g.current ?? 0), 0);
  return (
    <ActionModal header={`Delete cluster ${cluster.name}?`} action="Delete cluster" busy={run.busy} onClose={onClose} onAction={run.go}>
      {created ? (
        <Box variant="p">
          The HyperPod cluster and its {nodes} node(s) in {groups.length} instance group(s) are terminated (jobs stop,
          instance storage is lost), then the EKS cluster, the VPC podplane made for it and its IAM roles are deleted.
        </Box>
      ) : (
        <Box variant="p">
          This cluster was imported: podplane stops managing it and deletes nothing in the account.
        </Box>
      )}
      <Alert type="warning">This cannot be undone.</Alert>
      {run.error !== null && <ProblemAlert error={run.error} header="The cluster was not deleted" />}
    </ActionModal>
  );
}
