// The progress of a cluster's operation, read from the operation itself (so it survives a
// reload and a server restart) and kept live over its WebSocket: the Operations page's steps
// table, with each step's status, phase, elapsed time, error with hint, and Retry.
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Container from "@cloudscape-design/components/container";
import Header from "@cloudscape-design/components/header";
import Link from "@cloudscape-design/components/link";
import SpaceBetween from "@cloudscape-design/components/space-between";
import StatusIndicator from "@cloudscape-design/components/status-indicator";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect } from "react";
import { ProblemAlert } from "../../components/ProblemAlert";
import { Status } from "../../components/Status";
import { followHandler } from "../../router";
import { StepsTable } from "../operations/StepsTable";
import { fetchOperation, operationKey, useLiveOperation, useNow } from "../operations/live";
import { isTerminal } from "../operations/model";

export function ProgressPanel({ opId, cluster }: { opId: string; cluster: string }) {
  const client = useQueryClient();
  const query = useQuery({ queryKey: operationKey(opId), queryFn: () => fetchOperation(opId) });
  const live = useLiveOperation(opId, query.data);
  const op = query.data;
  const now = useNow(op !== undefined && !isTerminal(op));
  // Each step changes what the cluster page shows (HyperPod appears, the state settles).
  const updated = op?.updated_at;
  useEffect(() => {
    if (updated) void client.invalidateQueries({ queryKey: ["cluster", cluster] });
  }, [updated, cluster, client]);

  if (!op) {
    if (query.isError) return <ProblemAlert error={query.error} header={`Could not read operation ${opId}`} />;
    return <StatusIndicator type="loading">Loading operation {opId}</StatusIndicator>;
  }
  const lost = query.isError || live === "reconnecting";
  return (
    <SpaceBetween size="s">
      <Box>
        <SpaceBetween direction="horizontal" size="m" alignItems="center">
          <span data-testid="progress-status">
            <Status value={op.status} />
          </span>
          <span>
            {op.kind} ·{" "}
            <Link href={`/operations/${op.id}`} onFollow={followHandler}>
              {op.id}
            </Link>
          </span>
          {!isTerminal(op) && (
            <StatusIndicator type={live === "live" ? "in-progress" : "loading"}>
              {live === "live" ? "Live" : live === "reconnecting" ? "Reconnecting" : "Connecting"}
            </StatusIndicator>
          )}
        </SpaceBetween>
      </Box>
      {lost && !isTerminal(op) && (
        <Alert type="warning" header="Reconnecting to the control plane">
          Showing the last state read; the operation keeps running in the control plane.
        </Alert>
      )}
      <StepsTable op={op} now={now} variant="borderless" />
    </SpaceBetween>
  );
}

/** A detail page's "Operation" box around the panel (opened with ?op=<id>). */
export function OperationContainer({ opId, cluster, header = "Operation" }: { opId: string; cluster: string; header?: string }) {
  return (
    <Container header={<Header variant="h2">{header}</Header>}>
      <div data-testid="progress">
        <ProgressPanel opId={opId} cluster={cluster} />
      </div>
    </Container>
  );
}
