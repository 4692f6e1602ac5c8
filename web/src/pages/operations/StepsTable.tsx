import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Header from "@cloudscape-design/components/header";
import SpaceBetween from "@cloudscape-design/components/space-between";
import Table from "@cloudscape-design/components/table";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap } from "../../api/client";
import { ProblemAlert } from "../../components/ProblemAlert";
import { Status } from "../../components/Status";
import { formatDuration, Time } from "../../components/Time";
import { useFlash } from "../../layout/flash";
import { deniedReason } from "../../permissions";
import { usePrincipal } from "../../session";
import { operationKey } from "./live";
import { elapsedMs, retryableStep, type Operation, type Step } from "./model";

/** `borderless` when embedded in another container (the cluster page's progress panel). */
export function StepsTable({ op, now, variant = "container" }: { op: Operation; now: number; variant?: "container" | "borderless" }) {
  const retry = useRetry(op);
  const retryable = retryableStep(op);
  const denied = deniedReason(usePrincipal().role, "operation.retry_step");

  const actions = (step: Step) => {
    if (step.name !== retryable?.name) return null;
    return (
      <Button
        variant="normal"
        wrapText={false}
        ariaLabel={`Retry step ${step.name}`}
        loading={retry.busy === step.name}
        disabled={Boolean(denied)}
        disabledReason={denied}
        onClick={() => void retry.run(step.name)}
      >
        Retry
      </Button>
    );
  };

  return (
    <SpaceBetween size="s">
      {retry.error !== null && <ProblemAlert error={retry.error} header="The step was not retried" />}
      <Table
        variant={variant}
        header={<Header variant={variant === "container" ? "h2" : "h3"} counter={`(${op.steps.length})`}>Steps</Header>}
        items={op.steps}
        trackBy="name"
        wrapLines
        columnDefinitions={[
          {
            id: "name",
            header: "Step",
            cell: (s) => <b style={{ whiteSpace: "nowrap" }}>{`${op.steps.indexOf(s) + 1}. ${s.name}`}</b>,
            isRowHeader: true,
          },
          { id: "status", header: "Status", cell: (s) => <Status value={s.status} />, minWidth: 120 },
          {
            id: "phase",
            header: "Phase",
            cell: (s) => (
              <>
                {s.phase ?? "-"}
                <Box variant="small" display="block">attempt {s.attempt}</Box>
              </>
            ),
          },
          {
            id: "elapsed",
            header: "Elapsed",
            cell: (s) => {
              const ms = elapsedMs(s.started_at, s.ended_at, now);
              if (ms === undefined) return "-";
              return (
                <>
                  {formatDuration(ms)}
                  <Box variant="small" display="block">since <Time value={s.started_at} clock /></Box>
                </>
              );
            },
          },
          { id: "error", header: "Error", cell: (s) => <StepError step={s} />, minWidth: 220 },
          { id: "actions", header: "Actions", cell: actions, minWidth: 100 },
        ]}
        empty={<Box textAlign="center">This operation has no steps.</Box>}
      />
    </SpaceBetween>
  );
}

function StepError({ step }: { step: Step }) {
  if (!step.error) return <>-</>;
  return (
    <SpaceBetween size="xxxs">
      <Box color="text-status-error">
        <b>{step.error.code}</b>: {step.error.message}
      </Box>
      {step.error.hint && <Box variant="small">Hint: {step.error.hint}</Box>}
    </SpaceBetween>
  );
}

function useRetry(op: Operation) {
  const client = useQueryClient();
  const flash = useFlash();
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const run = async (step: string) => {
    setBusy(step);
    setError(null);
    try {
      const next = await unwrap(
        api.POST("/api/v1/operations/{op_id}/steps/{step}/retry", { params: { path: { op_id: op.id, step } } }),
      );
      client.setQueryData(operationKey(op.id), next);
      flash.push({ type: "info", content: `Retrying step ${step} of ${op.id}.` });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(null);
    }
  };
  return { busy, error, run };
}
