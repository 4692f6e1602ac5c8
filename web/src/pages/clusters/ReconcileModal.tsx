// Reconcile a degraded cluster: the plan first (a dry run: what is created or updated, in
// dependency order), then, once asked, the operation's steps live in the same dialog.
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Modal from "@cloudscape-design/components/modal";
import SpaceBetween from "@cloudscape-design/components/space-between";
import StatusIndicator from "@cloudscape-design/components/status-indicator";
import Table from "@cloudscape-design/components/table";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap, type Schemas } from "../../api/client";
import { ProblemAlert } from "../../components/ProblemAlert";
import { useRun } from "./GroupModals";
import { ProgressPanel } from "./ProgressPanel";

type Plan = Schemas["ReconcilePlanOut"];

interface Props {
  cluster: string;
  onClose: () => void;
  onStarted: (opId: string, label: string) => void;
}

export function ReconcileModal({ cluster, onClose, onStarted }: Props) {
  const path = { cluster };
  const plan = useQuery({
    queryKey: ["reconcile-plan", cluster], // not under ["cluster", …]: progress refreshes those
    queryFn: async () =>
      (await unwrap(api.POST("/api/v1/clusters/{cluster}/reconcile", { params: { path, query: { dry_run: true } } }))) as Plan,
  });
  const [opId, setOpId] = useState<string | null>(null);
  const run = useRun(
    (id, label) => {
      if (id) {
        setOpId(id);
        onStarted(id, label);
      } else {
        void plan.refetch(); // drift went away meanwhile: show that nothing is left to do
      }
    },
    `reconcile ${cluster}`,
    () => api.POST("/api/v1/clusters/{cluster}/reconcile", { params: { path, header: { "Idempotency-Key": run.key } } }),
  );
  const steps = plan.data?.plan ?? [];
  return (
    <Modal
      visible
      size="large"
      onDismiss={onClose}
      header={`Reconcile ${cluster}`}
      footer={
        <Box float="right">
          <SpaceBetween direction="horizontal" size="xs">
            <Button variant="link" onClick={onClose}>{opId ? "Close" : "Cancel"}</Button>
            {!opId && (
              <Button variant="primary" loading={run.busy && !opId} disabled={!plan.data?.changed} onClick={run.go}>
                Reconcile
              </Button>
            )}
          </SpaceBetween>
        </Box>
      }
    >
      <SpaceBetween size="m">
        {plan.isPending && <StatusIndicator type="loading">Observing the cluster</StatusIndicator>}
        {plan.isError && <ProblemAlert error={plan.error} header="Could not plan the reconcile" />}
        {plan.data && !plan.data.changed && <Alert type="success">Nothing has drifted: nothing to change.</Alert>}
        {plan.data?.changed && !opId && (
          <div data-testid="reconcile-plan">
            <Table
              variant="embedded"
              header={<Box variant="h3">Plan, in dependency order. Nothing is deleted.</Box>}
              items={steps}
              trackBy="unit"
              wrapLines
              columnDefinitions={[
                { id: "n", header: "#", cell: (s) => steps.indexOf(s) + 1 },
                { id: "action", header: "Action", cell: (s) => s.action },
                { id: "unit", header: "Unit", cell: (s) => s.unit, isRowHeader: true },
                { id: "kind", header: "Kind", cell: (s) => s.kind },
                { id: "reason", header: "Why", cell: (s) => s.reason },
              ]}
            />
          </div>
        )}
        {(plan.data?.left_alone.length ?? 0) > 0 && (
          <Alert type="info" header="Left alone (not created by podplane)">
            {plan.data?.left_alone.map((a) => `${a.unit}: ${a.reason}`).join("; ")}
          </Alert>
        )}
        {opId && (
          <div data-testid="reconcile-progress">
            <ProgressPanel opId={opId} cluster={cluster} />
          </div>
        )}
        {run.error !== null && <ProblemAlert error={run.error} header="The reconcile did not start" />}
      </SpaceBetween>
    </Modal>
  );
}
