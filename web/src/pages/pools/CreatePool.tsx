// Create a warm pool: engine pods of one model on one instance group (GPUs checked first),
// assigned to endpoints later from the pool's page. Only values that differ from the
// server's defaults are sent; a refusal naming a field shows at that field.
import Button from "@cloudscape-design/components/button";
import ColumnLayout from "@cloudscape-design/components/column-layout";
import Container from "@cloudscape-design/components/container";
import Form from "@cloudscape-design/components/form";
import FormField from "@cloudscape-design/components/form-field";
import Header from "@cloudscape-design/components/header";
import Input from "@cloudscape-design/components/input";
import Select from "@cloudscape-design/components/select";
import SpaceBetween from "@cloudscape-design/components/space-between";
import { useState } from "react";
import { api } from "../../api/client";
import { ProblemAlert } from "../../components/ProblemAlert";
import { useFlash } from "../../layout/flash";
import { deniedReason } from "../../permissions";
import { navigate } from "../../router";
import type { PageProps } from "../../routes";
import { usePrincipal } from "../../session";
import { DTYPES, ENGINES, GroupSelect, NumberField, useSubmit } from "../endpoints/fields";
import { poolPath, poolsPath, refusalHeader, type PoolRequest } from "./model";

interface FormState {
  name: string;
  model: string;
  engine: string;
  image: string;
  group: string;
  replicas: string;
  tp: string;
  maxLen: string;
  dtype: string;
}

const EMPTY: FormState = { name: "", model: "", engine: "vllm", image: "", group: "", replicas: "1", tp: "1", maxLen: "", dtype: "auto" };

/** The create body: what the user chose, defaults left to the server. */
export function poolBody(f: FormState): PoolRequest {
  const body: PoolRequest = { name: f.name.trim(), instance_group: f.group, model: f.model.trim() };
  if (f.engine !== "vllm") body.engine = f.engine as PoolRequest["engine"];
  if (f.image.trim()) body.image = f.image.trim();
  if (f.replicas.trim() && Number(f.replicas) !== 1) body.replicas = Number(f.replicas);
  if (f.tp.trim() && Number(f.tp) !== 1) body.tensor_parallel = Number(f.tp);
  if (f.maxLen.trim()) body.max_model_len = Number(f.maxLen);
  if (f.dtype !== "auto") body.dtype = f.dtype as PoolRequest["dtype"];
  return body;
}

export default function CreatePool({ params }: PageProps) {
  const cluster = params.cluster;
  const denied = deniedReason(usePrincipal().role, "pool.create");
  const flash = useFlash();
  const [form, setForm] = useState<FormState>(EMPTY);
  const set = (change: Partial<FormState>) => setForm((f) => ({ ...f, ...change }));
  const submit = useSubmit(
    (key) => api.POST("/api/v1/clusters/{cluster}/pools", { params: { path: { cluster }, header: { "Idempotency-Key": key } }, body: poolBody(form) }),
    (op) => {
      flash.push({ type: "success", content: `Started: create pool ${form.name} (${op}).` });
      navigate(`${poolPath(cluster, form.name.trim())}${op ? `?op=${op}` : ""}`);
    },
  );
  const errors = submit.errors;
  const number = (label: string, field: keyof FormState, description: string, errorKey: string) => (
    <NumberField label={label} description={description} value={form[field]} onChange={(v) => set({ [field]: v })} errorText={errors[errorKey]} />
  );
  return (
    <Form
      header={<Header variant="h1" description={`Engine pods that load one model on ${cluster} and wait; endpoints get them by label.`}>Create warm pool</Header>}
      actions={
        <SpaceBetween direction="horizontal" size="xs">
          <Button variant="link" onClick={() => navigate(poolsPath(cluster))}>Cancel</Button>
          <Button variant="primary" loading={submit.busy} disabled={Boolean(denied) || !form.name.trim() || !form.model.trim() || !form.group} disabledReason={denied} onClick={submit.go}>
            Create pool
          </Button>
        </SpaceBetween>
      }
    >
      <SpaceBetween size="l">
        {submit.error !== null && <ProblemAlert error={submit.error} header={refusalHeader(submit.error, "The pool was not created")} />}
        <Container>
          <SpaceBetween size="m">
            <ColumnLayout columns={2}>
              <FormField label="Pool name" description="A DNS label, up to 40 characters; the engine serves the model under this name." errorText={errors.name}>
                <Input ariaLabel="Pool name" value={form.name} onChange={(e) => set({ name: e.detail.value })} />
              </FormField>
              <FormField label="Model" description="s3://bucket/prefix of the weights, or a Hugging Face id." errorText={errors.model}>
                <Input ariaLabel="Model" value={form.model} onChange={(e) => set({ model: e.detail.value })} />
              </FormField>
              <FormField label="Engine" errorText={errors.engine}>
                <Select ariaLabel="Engine" options={ENGINES} selectedOption={ENGINES.find((o) => o.value === form.engine) ?? null} onChange={(e) => set({ engine: e.detail.selectedOption.value ?? "vllm" })} />
              </FormField>
              <FormField label="Image" description="Empty: the engine's pinned release." errorText={errors.image}>
                <Input ariaLabel="Image" value={form.image} onChange={(e) => set({ image: e.detail.value })} />
              </FormField>
            </ColumnLayout>
            <GroupSelect cluster={cluster} value={form.group} onChange={(group) => set({ group })} errorText={errors.instance_group} />
            <ColumnLayout columns={4}>
              {number("Pods", "replicas", "Warm pods, one replica each.", "replicas")}
              {number("Tensor parallel", "tp", "GPUs per pod.", "tensor_parallel")}
              {number("Max model length", "maxLen", "Empty: the model's.", "max_model_len")}
              <FormField label="Dtype" errorText={errors.dtype}>
                <Select ariaLabel="Dtype" options={DTYPES} selectedOption={DTYPES.find((o) => o.value === form.dtype) ?? null} onChange={(e) => set({ dtype: e.detail.selectedOption.value ?? "auto" })} />
              </FormField>
            </ColumnLayout>
          </SpaceBetween>
        </Container>
      </SpaceBetween>
    </Form>
  );
}
