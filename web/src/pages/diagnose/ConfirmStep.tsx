// Confirming a suggested step: a dialog that names the call and what it costs, then makes it
// with a fresh Idempotency-Key; and the operation it started, followed live.
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Link from "@cloudscape-design/components/link";
import SpaceBetween from "@cloudscape-design/components/space-between";
import { useQuery } from "@tanstack/react-query";
import { ProblemAlert } from "../../components/ProblemAlert";
import { Status } from "../../components/Status";
import { followHandler } from "../../router";
import { ActionModal, useRun } from "../clusters/GroupModals";
import { fetchOperation, operationKey, useLiveOperation } from "../operations/live";
import { callText, type Performable } from "./actions";
import type { SuggestedCall } from "./model";

interface Props {
  action: Performable;
  call: SuggestedCall;
  onClose: () => void;
  onDone: (opId: string | null, label: string) => void;
}

export function ConfirmStep({ action, call, onClose, onDone }: Props) {
  const run = useRun(onDone, action.verb.toLowerCase(), () => action.call(run.key)());
  return (
    <ActionModal header={`${action.verb}?`} action={action.verb} busy={run.busy} onClose={onClose} onAction={run.go}>
      <Box variant="p">
        The diagnosis suggests <Box variant="code">{callText(call)}</Box>. Nothing is sent until you confirm.
      </Box>
      <Alert type="warning" header="What it costs">{call.cost}</Alert>
      {run.error !== null && <ProblemAlert error={run.error} header="Nothing was started" />}
    </ActionModal>
  );
}

export function StartedOperation({ id }: { id: string }) {
  const query = useQuery({ queryKey: operationKey(id), queryFn: () => fetchOperation(id) });
  useLiveOperation(id, query.data);
  return (
    <SpaceBetween direction="horizontal" size="m" alignItems="center">
      <span>Started operation</span>
      <Link href={`/operations/${id}`} onFollow={followHandler}>{id}</Link>
      <span data-testid="diagnose-started-status"><Status value={query.data?.status ?? "pending"} /></span>
    </SpaceBetween>
  );
}
