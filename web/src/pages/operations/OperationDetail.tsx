// One operation: its steps with status, phase, attempt, elapsed time and errors with hints,
// live while it runs, with retry for the failed step and cancel. Reading the operation from
// the server is the whole state, so the page survives a reload and a server restart.
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Container from "@cloudscape-design/components/container";
import Header from "@cloudscape-design/components/header";
import KeyValuePairs from "@cloudscape-design/components/key-value-pairs";
import SpaceBetween from "@cloudscape-design/components/space-between";
import StatusIndicator from "@cloudscape-design/components/status-indicator";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { ProblemAlert } from "../../components/ProblemAlert";
import { Status } from "../../components/Status";
import { formatDuration, Time } from "../../components/Time";
import type { PageProps } from "../../routes";
import { CancelModal } from "./CancelModal";
import { StepHistory } from "./StepHistory";
import { StepsTable } from "./StepsTable";
import { fetchOperation, operationKey, useLiveOperation, useNow, type LiveState } from "./live";
import { elapsedMs, isTerminal, type Operation } from "./model";
import { deniedReason } from "../../permissions";
import { usePrincipal } from "../../session";
import { DiagnoseButton } from "../diagnose/DiagnoseButton";

export default function OperationDetail({ params }: PageProps) {
  const id = params.id;
  const query = useQuery({ queryKey: operationKey(id), queryFn: () => fetchOperation(id) });
  const live = useLiveOperation(id, query.data);
  if (!query.data) {
    if (query.isError) return <ProblemAlert error={query.error} header={`Could not read operation ${id}`} />;
    return <StatusIndicator type="loading">Loading operation {id}</StatusIndicator>;
  }
  // Once read, the operation stays on screen if the server goes away; a banner says so.
  return <OperationView op={query.data} live={live} lost={query.isError || live === "reconnecting"} />;
}

function OperationView({ op, live, lost }: { op: Operation; live: LiveState; lost: boolean }) {
  const who = usePrincipal();
  const [cancelling, setCancelling] = useState(false);
  const now = useNow(!isTerminal(op));
  const cancelDenied = deniedReason(who.role, "operation.cancel");

  return (
    <SpaceBetween size="l">
      <Header
        variant="h1"
        description={`${op.kind} on ${op.target}`}
        info={<LiveBadge op={op} live={live} />}
        actions={
          <SpaceBetween direction="horizontal" size="xs">
            {op.status !== "succeeded" && <DiagnoseButton subject={{ kind: "operation", id: op.id }} />}
            {!isTerminal(op) && (
              <Button
                disabled={Boolean(cancelDenied) || op.cancel_requested}
                disabledReason={cancelDenied ?? "Cancellation already requested."}
                onClick={() => setCancelling(true)}
              >
                Cancel operation
              </Button>
            )}
          </SpaceBetween>
        }
      >
        Operation {op.id}
      </Header>
      {lost && !isTerminal(op) && (
        <Alert type="warning" header="Reconnecting to the control plane">
          Showing the last state read. The operation itself keeps running in the control plane;
          this page catches up as soon as it answers again.
        </Alert>
      )}
      {op.error && <OperationError error={op.error} />}
      <Container header={<Header variant="h2">Summary</Header>}>
        <KeyValuePairs
          columns={4}
          items={[
            { label: "Status", value: <span data-testid="op-status"><Status value={op.status} /></span> },
            { label: "Kind", value: op.kind },
            { label: "Target", value: op.target },
            { label: "Requested by", value: `${op.requested_by.principal} (${op.requested_by.face})` },
            { label: "Created", value: <Time value={op.created_at} /> },
            { label: "Updated", value: <Time value={op.updated_at} /> },
            { label: "Elapsed", value: formatDuration(elapsedMs(op.created_at, isTerminal(op) ? op.updated_at : null, now) ?? 0) },
            { label: "Idempotency key", value: op.idempotency_key ?? "-" },
          ]}
        />
      </Container>
      <StepsTable op={op} now={now} />
      {op.result && (
        <Container header={<Header variant="h2">Result</Header>}>
          <Box variant="code">
            <pre style={{ margin: 0, whiteSpace: "pre-wrap" }}>{JSON.stringify(op.result, null, 2)}</pre>
          </Box>
        </Container>
      )}
      <StepHistory op={op} />
      {cancelling && <CancelModal op={op} onClose={() => setCancelling(false)} />}
    </SpaceBetween>
  );
}

function LiveBadge({ op, live }: { op: Operation; live: LiveState }) {
  if (isTerminal(op)) return <Status value={op.status} />;
  if (live === "live") return <StatusIndicator type="in-progress">Live</StatusIndicator>;
  const text = live === "reconnecting" ? "Reconnecting" : "Connecting";
  return <StatusIndicator type="loading">{text}</StatusIndicator>;
}

function OperationError({ error }: { error: NonNullable<Operation["error"]> }) {
  return (
    <Alert type="error" header={`The operation failed: ${error.code}`}>
      {error.message}
      {error.hint && <Box variant="p" color="text-body-secondary">Hint: {error.hint}</Box>}
    </Alert>
  );
}
