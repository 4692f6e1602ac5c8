// A new dev space: name, template (optional), instance group (optional: any group), CPU,
// memory, GPUs, home volume size and idle stop; what is left empty takes the template's
// defaults (the placeholders show them) and the template's maxima are shown beside each field. The form checks what it can with the server's own patterns and bounds;
// the server's refusals (a 422 naming the field, or dev spaces being off) show at the field or
// above the form. Once accepted, the space's page follows the create operation.
import Button from "@cloudscape-design/components/button";
import ColumnLayout from "@cloudscape-design/components/column-layout";
import Container from "@cloudscape-design/components/container";
import Form from "@cloudscape-design/components/form";
import FormField from "@cloudscape-design/components/form-field";
import Header from "@cloudscape-design/components/header";
import Input from "@cloudscape-design/components/input";
import Select from "@cloudscape-design/components/select";
import SpaceBetween from "@cloudscape-design/components/space-between";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap } from "../../api/client";
import { ProblemAlert } from "../../components/ProblemAlert";
import { useFlash } from "../../layout/flash";
import { deniedReason } from "../../permissions";
import { navigate } from "../../router";
import type { PageProps } from "../../routes";
import { usePrincipal } from "../../session";
import { GroupSelect, NumberField, useSubmit } from "../endpoints/fields";
import { EMPTY, problems, spaceBody, type SpaceForm } from "./form";
import { spacePath, spacesPath, type Template, templatesKey } from "./model";

// The server's defaults when neither the space nor a template says (domain/spaces/templates.py).
const SERVER = { cpu: "1", memory: "4Gi", storage_gib: 20, idle_minutes: 60 };

function TemplateSelect({ templates, value, onChange, errorText }: { templates: Template[]; value: string; onChange: (name: string) => void; errorText?: string }) {
  const none = { label: "None", value: "", description: "podplane's defaults, no bounds" };
  const options = [none, ...templates.map((t) => ({ label: t.display_name, value: t.name, description: `${t.name}: up to ${t.max_cpu ?? "any"} CPU, ${t.max_memory ?? "any"}, ${t.max_gpus ?? "any"} GPU` }))];
  return (
    <FormField label="Template" description="An admin's choice of images, bounds and defaults." errorText={errorText}>
      <Select ariaLabel="Template" selectedOption={options.find((o) => o.value === value) ?? none} options={options} onChange={(e) => onChange(e.detail.selectedOption.value ?? "")} />
    </FormField>
  );
}

export default function NewSpace({ params }: PageProps) {
  const cluster = params.cluster;
  const denied = deniedReason(usePrincipal().role, "space.create");
  const flash = useFlash();
  const [form, setForm] = useState<SpaceForm>(EMPTY);
  const set = (change: Partial<SpaceForm>) => setForm((f) => ({ ...f, ...change }));
  const submit = useSubmit(
    (key) => api.POST("/api/v1/clusters/{cluster}/spaces", { params: { path: { cluster }, header: { "Idempotency-Key": key } }, body: spaceBody(form) }),
    (op) => {
      flash.push({ type: "success", content: `Started: create space ${form.name.trim()} (${op}).` });
      navigate(`${spacePath(cluster, form.name.trim())}${op ? `?op=${op}` : ""}`);
    },
  );
  const templates = useQuery({
    queryKey: templatesKey(cluster),
    queryFn: async () => unwrap(api.GET("/api/v1/clusters/{cluster}/space-templates", { params: { path: { cluster } } })),
  });
  const chosen = (templates.data ?? []).find((t) => t.name === form.template);
  const preset = {
    cpu: chosen?.cpu ?? SERVER.cpu,
    memory: chosen?.memory ?? SERVER.memory,
    storage: String(chosen?.storage_gib ?? SERVER.storage_gib),
    idle: String(chosen?.idle_minutes ?? SERVER.idle_minutes),
  };
  const most = (limit: string | number | null | undefined) => (chosen && limit != null ? ` At most ${limit}.` : "");
  const wrong = problems(form);
  const errors: Record<string, string | undefined> = { ...submit.errors, ...wrong };
  const number = (label: string, field: "gpus" | "storage" | "idle", key: string, description: string) => (
    <NumberField label={label} description={description} value={form[field]} placeholder={field === "gpus" ? undefined : preset[field]} onChange={(v) => set({ [field]: v })} errorText={errors[key]} />
  );
  const text = (label: string, field: "cpu" | "memory", description: string) => (
    <FormField label={label} description={description} errorText={errors[field]}>
      <Input ariaLabel={label} value={form[field]} placeholder={preset[field]} onChange={(e) => set({ [field]: e.detail.value })} />
    </FormField>
  );
  return (
    <Form
      header={<Header variant="h1" description={`JupyterLab on ${cluster}: a home volume of its own, the cluster bucket at /data, /models and /outputs.`}>New space</Header>}
      actions={
        <SpaceBetween direction="horizontal" size="xs">
          <Button variant="link" onClick={() => navigate(spacesPath(cluster))}>Cancel</Button>
          <Button variant="primary" loading={submit.busy} disabled={Boolean(denied) || !form.name.trim() || Object.keys(wrong).length > 0} disabledReason={denied} onClick={submit.go}>
            Create space
          </Button>
        </SpaceBetween>
      }
    >
      <SpaceBetween size="l">
        {submit.error !== null && <ProblemAlert error={submit.error} header="The space was not created" />}
        <Container header={<Header variant="h2">Space</Header>}>
          <SpaceBetween size="m">
            <FormField label="Space name" description="A DNS label: the Workspace's name, and its page's." errorText={errors.name}>
              <Input ariaLabel="Space name" value={form.name} onChange={(e) => set({ name: e.detail.value })} />
            </FormField>
            <TemplateSelect templates={templates.data ?? []} value={form.template} onChange={(template) => set({ template })} errorText={errors.template ?? errors.image} />
            <GroupSelect cluster={cluster} value={form.group} onChange={(group) => set({ group })} errorText={errors.instance_group} anyLabel="Any group" />
          </SpaceBetween>
        </Container>
        <Container header={<Header variant="h2" description="What the space asks of its node; a space with GPUs names its instance group.">Resources</Header>}>
          <SpaceBetween size="m">
            <ColumnLayout columns={3}>
              {text("CPU", "cpu", `e.g. 2, 0.5 or 500m.${most(chosen?.max_cpu)}`)}
              {text("Memory", "memory", `e.g. 4Gi or 512Mi.${most(chosen?.max_memory)}`)}
              {number("GPUs", "gpus", "gpus", `0 for a CPU space.${most(chosen?.max_gpus)}`)}
            </ColumnLayout>
            <ColumnLayout columns={3}>
              {number("Home volume (GiB)", "storage", "storage_gib", `Kept when the space stops or is deleted.${most(chosen?.max_storage_gib)}`)}
              {number("Idle stop (minutes)", "idle", "idle_minutes", "Stops after this long idle; 0 never.")}
            </ColumnLayout>
          </SpaceBetween>
        </Container>
      </SpaceBetween>
    </Form>
  );
}
