// Deploy a model (self-managed vLLM or SGLang): engine, image, model, instance group, replicas,
// parallelism, exposure, the SGLang router and autoscaling; only values that differ from the
// server's defaults are sent. The server's refusals (a 422 naming the field) show at that
// field. Once accepted, the endpoint's page follows the create operation.
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
import { DTYPES, ENGINES, GroupSelect, NumberField, useSubmit } from "./fields";
import { endpointPath, endpointsPath, type EndpointRequest } from "./model";
import { NO_SCALING, ScalingFields, scalingBody, type Scaling } from "./ScalingFields";

interface FormState extends Scaling {
  name: string;
  engine: EndpointRequest["engine"];
  image: string;
  model: string;
  group: string;
  replicas: string;
  tp: string;
  pp: string;
  maxLen: string;
  dtype: EndpointRequest["dtype"];
  exposure: EndpointRequest["exposure"];
}

const EMPTY: FormState = { name: "", engine: "vllm", image: "", model: "", group: "", replicas: "1", tp: "1", pp: "1", maxLen: "", dtype: "auto", exposure: "service", ...NO_SCALING };

/** The create body: what the user chose, defaults left to the server. */
export function deployBody(f: FormState): EndpointRequest {
  const body: EndpointRequest = { name: f.name.trim(), instance_group: f.group, model: f.model.trim(), engine: f.engine };
  if (f.image.trim()) body.image = f.image.trim();
  if (f.replicas.trim() && Number(f.replicas) !== 1) body.replicas = Number(f.replicas);
  if (f.tp.trim() && Number(f.tp) !== 1) body.tensor_parallel = Number(f.tp);
  if (f.pp.trim() && Number(f.pp) !== 1) body.pipeline_parallel = Number(f.pp);
  if (f.maxLen.trim()) body.max_model_len = Number(f.maxLen);
  if (f.dtype !== "auto") body.dtype = f.dtype;
  if (f.exposure !== "service") body.exposure = f.exposure;
  return { ...body, ...scalingBody(f, f.engine ?? "vllm") };
}

const EXPOSURES = [
  { value: "service", label: "In-cluster Service", description: "ClusterIP; podplane calls it through the API server" },
  { value: "load_balancer", label: "Load balancer", description: "Also a load balancer inside the VPC (internet-facing: admin, through the API or CLI)" },
];

export default function DeployEndpoint({ params }: PageProps) {
  const cluster = params.cluster;
  const denied = deniedReason(usePrincipal().role, "endpoint.create");
  const flash = useFlash();
  const [form, setForm] = useState<FormState>(EMPTY);
  const set = (change: Partial<FormState>) => setForm((f) => ({ ...f, ...change }));
  const submit = useSubmit(
    (key) => api.POST("/api/v1/clusters/{cluster}/endpoints", { params: { path: { cluster }, header: { "Idempotency-Key": key } }, body: deployBody(form) }),
    (op) => {
      flash.push({ type: "success", content: `Started: deploy ${form.name} (${op}).` });
      navigate(`${endpointPath(cluster, form.name.trim())}${op ? `?op=${op}` : ""}`);
    },
  );
  const errors = submit.errors;
  const number = (label: string, field: keyof FormState, errorKey: string, description: string) => (
    <NumberField label={label} description={description} value={String(form[field])} onChange={(v) => set({ [field]: v })} errorText={errors[errorKey]} />
  );
  return (
    <Form
      header={<Header variant="h1" description={`vLLM or SGLang on one instance group of ${cluster}: a Deployment and a Service.`}>Deploy model</Header>}
      actions={
        <SpaceBetween direction="horizontal" size="xs">
          <Button variant="link" onClick={() => navigate(endpointsPath(cluster))}>Cancel</Button>
          <Button variant="primary" loading={submit.busy} disabled={Boolean(denied) || !form.name.trim() || !form.model.trim() || !form.group} disabledReason={denied} onClick={submit.go}>
            Deploy
          </Button>
        </SpaceBetween>
      }
    >
      <SpaceBetween size="l">
        {submit.error !== null && <ProblemAlert error={submit.error} header="The model was not deployed" />}
        <Container header={<Header variant="h2">Model</Header>}>
          <SpaceBetween size="m">
            <FormField label="Endpoint name" description="A DNS label, up to 40 characters: the Deployment's, the Service's and the served model's name." errorText={errors.name}>
              <Input ariaLabel="Endpoint name" value={form.name} onChange={(e) => set({ name: e.detail.value })} />
            </FormField>
            <FormField label="Model" description="s3://bucket/prefix of the weights (vLLM), or a Hugging Face id (org/name)." errorText={errors.model}>
              <Input ariaLabel="Model" value={form.model} onChange={(e) => set({ model: e.detail.value })} />
            </FormField>
            <ColumnLayout columns={2}>
              <FormField label="Engine" errorText={errors.engine}>
                <Select ariaLabel="Engine" options={ENGINES} selectedOption={ENGINES.find((o) => o.value === form.engine) ?? null} onChange={(e) => set({ engine: e.detail.selectedOption.value as FormState["engine"] })} />
              </FormField>
              <FormField label="Image" description="Empty: the engine's pinned release." errorText={errors.image}>
                <Input ariaLabel="Image" value={form.image} placeholder="docker.io/vllm/vllm-openai:v0.9.0" onChange={(e) => set({ image: e.detail.value })} />
              </FormField>
            </ColumnLayout>
          </SpaceBetween>
        </Container>
        <Container header={<Header variant="h2" description="GPUs per replica = tensor x pipeline parallelism, on one node of the group.">Capacity</Header>}>
          <SpaceBetween size="m">
            <GroupSelect cluster={cluster} value={form.group} onChange={(group) => set({ group })} errorText={errors.instance_group} />
            <ColumnLayout columns={3}>
              {number("Replicas", "replicas", "replicas", "Pods serving the model.")}
              {number("Tensor parallel", "tp", "tensor_parallel", "GPUs per replica.")}
              {number("Pipeline parallel", "pp", "pipeline_parallel", "Stages per replica (vLLM).")}
            </ColumnLayout>
            <ColumnLayout columns={3}>
              {number("Max model length", "maxLen", "max_model_len", "Context length; empty: the model's.")}
              <FormField label="Dtype" errorText={errors.dtype}>
                <Select ariaLabel="Dtype" options={DTYPES} selectedOption={DTYPES.find((o) => o.value === form.dtype) ?? null} onChange={(e) => set({ dtype: e.detail.selectedOption.value as FormState["dtype"] })} />
              </FormField>
              <FormField label="Exposure" errorText={errors.exposure}>
                <Select ariaLabel="Exposure" options={EXPOSURES} selectedOption={EXPOSURES.find((o) => o.value === form.exposure) ?? null} onChange={(e) => set({ exposure: e.detail.selectedOption.value as FormState["exposure"] })} />
              </FormField>
            </ColumnLayout>
          </SpaceBetween>
        </Container>
        <ScalingFields engine={form.engine ?? "vllm"} value={form} onChange={set} errors={errors} />
      </SpaceBetween>
    </Form>
  );
}
