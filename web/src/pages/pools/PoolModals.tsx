// Scale a warm pool (scale-in removes free pods only: the server refuses one that would need an
// assigned or draining pod), assign its pods to an endpoint (fewer pods drain the extra ones;
// 0 unassigns) and delete it (confirm=true, admin), each through a modal.
import Alert from "@cloudscape-design/components/alert";
import Autosuggest from "@cloudscape-design/components/autosuggest";
import Box from "@cloudscape-design/components/box";
import FormField from "@cloudscape-design/components/form-field";
import Input from "@cloudscape-design/components/input";
import { useState } from "react";
import { api } from "../../api/client";
import { ProblemAlert } from "../../components/ProblemAlert";
import { ActionModal, useRun } from "../clusters/GroupModals";
import { refusalHeader, type Pool } from "./model";

interface Props {
  cluster: string;
  pool: Pool;
  onClose: () => void;
  onDone: (opId: string | null, label: string) => void;
}

const whole = (text: string) => text.trim() !== "" && Number.isInteger(Number(text)) && Number(text) >= 0;

export function ScalePoolModal({ cluster, pool, onClose, onDone }: Props) {
  const [count, setCount] = useState(String(pool.replicas));
  const run = useRun(onDone, `scale pool ${pool.name} to ${count}`, () =>
    api.PATCH("/api/v1/clusters/{cluster}/pools/{name}", {
      params: { path: { cluster, name: pool.name }, header: { "Idempotency-Key": run.key } },
      body: { replicas: Number(count) },
    }),
  );
  return (
    <ActionModal header={`Scale pool ${pool.name}`} action="Scale" busy={run.busy} disabled={!whole(count) || Number(count) === pool.replicas} onClose={onClose} onAction={run.go}>
      <FormField label="Pods" description={`Now ${pool.replicas}: ${pool.free} free, the others assigned or draining. Fewer pods removes free ones only.`} errorText={whole(count) ? undefined : "A whole number, 0 or more."}>
        <Input type="number" ariaLabel="Pods" value={count} onChange={(e) => setCount(e.detail.value)} />
      </FormField>
      {run.error !== null && <ProblemAlert error={run.error} header={refusalHeader(run.error, "The pool was not scaled")} />}
    </ActionModal>
  );
}

export function AssignModal({ cluster, pool, endpoint = "", pods = "1", onClose, onDone }: Props & { endpoint?: string; pods?: string }) {
  const [name, setName] = useState(endpoint);
  const [count, setCount] = useState(pods);
  const label = Number(count) === 0 ? `unassign ${name} from ${pool.name}` : `assign ${count} pod(s) of ${pool.name} to ${name}`;
  const run = useRun(onDone, label, () =>
    api.POST("/api/v1/clusters/{cluster}/pools/{name}/assign", {
      params: { path: { cluster, name: pool.name }, header: { "Idempotency-Key": run.key } },
      // 0 removes the endpoint (a destroy, admin): Unassign, after this dialog, is the confirmation.
      body: { endpoint: name.trim(), pods: Number(count), ...(Number(count) === 0 ? { confirm: true } : {}) },
    }),
  );
  return (
    <ActionModal header={`Assign pods of ${pool.name}`} action={Number(count) === 0 ? "Unassign" : "Assign"} busy={run.busy} disabled={!name.trim() || !whole(count)} onClose={onClose} onAction={run.go}>
      <Box variant="p">
        The endpoint is a Service selecting the pods by label: no pod starts. Fewer pods take the extra ones out of the
        Service, then wait for their requests in flight (draining); 0 removes the endpoint.
      </Box>
      <FormField label="Endpoint" description="A new endpoint name, or one the pool serves.">
        <Autosuggest ariaLabel="Endpoint" value={name} options={pool.assigned.map((value) => ({ value }))} enteredTextLabel={(v) => `Use "${v}"`} onChange={(e) => setName(e.detail.value)} />
      </FormField>
      <FormField label="Pods" description={`${pool.free} free pod(s) in the pool.`} errorText={whole(count) ? undefined : "A whole number, 0 or more."}>
        <Input type="number" ariaLabel="Pods" value={count} onChange={(e) => setCount(e.detail.value)} />
      </FormField>
      {run.error !== null && <ProblemAlert error={run.error} header={refusalHeader(run.error, "The pods were not assigned")} />}
    </ActionModal>
  );
}

export function DeletePoolModal({ cluster, pool, onClose, onDone }: Props) {
  const run = useRun(onDone, `delete pool ${pool.name}`, () =>
    api.DELETE("/api/v1/clusters/{cluster}/pools/{name}", {
      params: { path: { cluster, name: pool.name }, query: { confirm: true }, header: { "Idempotency-Key": run.key } },
    }),
  );
  return (
    <ActionModal header={`Delete pool ${pool.name}?`} action="Delete pool" busy={run.busy} onClose={onClose} onAction={run.go}>
      <Box variant="p">Its Deployment and warm pods are deleted. A pool that still serves an endpoint is refused: unassign first.</Box>
      <Alert type="warning">This cannot be undone.</Alert>
      {run.error !== null && <ProblemAlert error={run.error} header={refusalHeader(run.error, "The pool was not deleted")} />}
    </ActionModal>
  );
}
