// Stop (cancel: runPolicy.suspend, the job is kept) and delete (a destroy: confirm=true, admin)
// a job, each through a confirmation modal that names what happens.
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import { api } from "../../api/client";
import { ProblemAlert } from "../../components/ProblemAlert";
import { ActionModal, useRun } from "../clusters/GroupModals";

interface Props {
  cluster: string;
  job: string;
  onClose: () => void;
  onDone: (opId: string | null, label: string) => void;
}

export function StopJobModal({ cluster, job, onClose, onDone }: Props) {
  const run = useRun(onDone, `stop ${job}`, () =>
    api.POST("/api/v1/clusters/{cluster}/jobs/{job}/cancel", {
      params: { path: { cluster, job }, header: { "Idempotency-Key": run.key } },
    }),
  );
  return (
    <ActionModal header={`Stop job ${job}?`} action="Stop job" busy={run.busy} onClose={onClose} onAction={run.go}>
      <Box variant="p">
        The job is suspended: its pods are deleted and training stops. The job stays, with its status and events, until
        you delete it. Checkpoints and outputs in the bucket stay.
      </Box>
      {run.error !== null && <ProblemAlert error={run.error} header="The job was not stopped" />}
    </ActionModal>
  );
}

export function DeleteJobModal({ cluster, job, onClose, onDone }: Props) {
  const run = useRun(onDone, `delete ${job}`, () =>
    api.DELETE("/api/v1/clusters/{cluster}/jobs/{job}", {
      params: { path: { cluster, job }, query: { confirm: true }, header: { "Idempotency-Key": run.key } },
    }),
  );
  return (
    <ActionModal header={`Delete job ${job}?`} action="Delete job" busy={run.busy} onClose={onClose} onAction={run.go}>
      <Box variant="p">The job, its pods and their logs are deleted. Checkpoints and outputs in the bucket stay.</Box>
      <Alert type="warning">This cannot be undone.</Alert>
      {run.error !== null && <ProblemAlert error={run.error} header="The job was not deleted" />}
    </ActionModal>
  );
}
