// Scale (replicas), update (image, model, parallelism, context length, dtype: a rolling update
// ending with a smoke request, rolled back on failure) and delete (a destroy: confirm=true,
// admin) an endpoint, each through a modal; only changed values are sent.
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import ColumnLayout from "@cloudscape-design/components/column-layout";
import FormField from "@cloudscape-design/components/form-field";
import Input from "@cloudscape-design/components/input";
import { useState } from "react";
import { api } from "../../api/client";
import { ProblemAlert } from "../../components/ProblemAlert";
import { ActionModal, useRun } from "../clusters/GroupModals";
import type { Endpoint, EndpointPatch } from "./model";

interface Props {
  cluster: string;
  endpoint: Endpoint;
  onClose: () => void;
  onDone: (opId: string | null, label: string) => void;
}

function patch(cluster: string, name: string, key: string, body: EndpointPatch) {
  return api.PATCH("/api/v1/clusters/{cluster}/endpoints/{name}", {
    params: { path: { cluster, name }, header: { "Idempotency-Key": key } },
    body,
  });
}

export function ScaleEndpointModal({ cluster, endpoint, onClose, onDone }: Props) {
  const [count, setCount] = useState(String(endpoint.replicas));
  const valid = count.trim() !== "" && Number.isInteger(Number(count)) && Number(count) >= 0;
  const run = useRun(onDone, `scale ${endpoint.name} to ${count}`, () => patch(cluster, endpoint.name, run.key, { replicas: Number(count) }));
  return (
    <ActionModal header={`Scale ${endpoint.name}`} action="Scale" busy={run.busy} disabled={!valid || Number(count) === endpoint.replicas} onClose={onClose} onAction={run.go}>
      <FormField label="Replicas" description={`Now ${endpoint.ready_replicas} of ${endpoint.replicas} Ready; 0 stops serving.`} errorText={valid ? undefined : "A whole number, 0 or more."}>
        <Input type="number" ariaLabel="Replicas" value={count} onChange={(e) => setCount(e.detail.value)} />
      </FormField>
      {run.error !== null && <ProblemAlert error={run.error} header="The endpoint was not scaled" />}
    </ActionModal>
  );
}

/** The update body: only the fields whose value differs from what the endpoint runs. */
export function updateBody(e: Endpoint, f: Record<string, string>): EndpointPatch {
  const body: EndpointPatch = {};
  if (f.image.trim() && f.image.trim() !== e.image) body.image = f.image.trim();
  if (f.model.trim() && f.model.trim() !== e.model) body.model = f.model.trim();
  if (f.tp.trim() && Number(f.tp) !== e.tensor_parallel) body.tensor_parallel = Number(f.tp);
  if (f.pp.trim() && Number(f.pp) !== e.pipeline_parallel) body.pipeline_parallel = Number(f.pp);
  if (f.maxLen.trim() && Number(f.maxLen) !== e.max_model_len) body.max_model_len = Number(f.maxLen);
  return body;
}

export function UpdateEndpointModal({ cluster, endpoint: e, onClose, onDone }: Props) {
  const [form, setForm] = useState<Record<string, string>>({
    image: e.image ?? "",
    model: e.model ?? "",
    tp: String(e.tensor_parallel ?? 1),
    pp: String(e.pipeline_parallel),
    maxLen: e.max_model_len ? String(e.max_model_len) : "",
  });
  const body = updateBody(e, form);
  const run = useRun(onDone, `update ${e.name}`, () => patch(cluster, e.name, run.key, body));
  const field = (label: string, key: string, type: "text" | "number" = "text") => (
    <FormField label={label}>
      <Input ariaLabel={label} type={type} value={form[key]} onChange={(ev) => setForm((f) => ({ ...f, [key]: ev.detail.value }))} />
    </FormField>
  );
  return (
    <ActionModal header={`Update ${e.name}`} action="Update" busy={run.busy} disabled={Object.keys(body).length === 0} onClose={onClose} onAction={run.go}>
      <Box variant="p">
        One new pod at a time; the old pods serve until new ones are Ready. It ends with one real request through the
        Service; if the rollout or that request fails, the previous version is applied again and the operation says why.
      </Box>
      {field("Image", "image")}
      {field("Model", "model")}
      <ColumnLayout columns={3}>
        {field("Tensor parallel", "tp", "number")}
        {field("Pipeline parallel", "pp", "number")}
        {field("Max model length", "maxLen", "number")}
      </ColumnLayout>
      {run.error !== null && <ProblemAlert error={run.error} header="The endpoint was not updated" />}
    </ActionModal>
  );
}

export function DeleteEndpointModal({ cluster, endpoint, onClose, onDone }: Props) {
  const run = useRun(onDone, `delete ${endpoint.name}`, () =>
    api.DELETE("/api/v1/clusters/{cluster}/endpoints/{name}", {
      params: { path: { cluster, name: endpoint.name }, query: { confirm: true }, header: { "Idempotency-Key": run.key } },
    }),
  );
  return (
    <ActionModal header={`Delete endpoint ${endpoint.name}?`} action="Delete endpoint" busy={run.busy} onClose={onClose} onAction={run.go}>
      <Box variant="p">Its Deployment, pods and Service are deleted; requests in flight fail. The model's weights stay where they are.</Box>
      <Alert type="warning">This cannot be undone.</Alert>
      {run.error !== null && <ProblemAlert error={run.error} header="The endpoint was not deleted" />}
    </ActionModal>
  );
}
