// A new dev space: name, instance group (optional: any group), CPU, memory, GPUs, home volume
// size and idle stop. The form checks what it can with the server's own patterns and bounds;
// the server's refusals (a 422 naming the field, or dev spaces being off) show at the field or
// above the form. Once accepted, the space's page follows the create operation.
import Button from "@cloudscape-design/components/button";
import ColumnLayout from "@cloudscape-design/components/column-layout";
import Container from "@cloudscape-design/components/container";
import Form from "@cloudscape-design/components/form";
import FormField from "@cloudscape-design/components/form-field";
import Header from "@cloudscape-design/components/header";
import Input from "@cloudscape-design/components/input";
import SpaceBetween from "@cloudscape-design/components/space-between";
import { useState } from "react";
import { api } from "../../api/client";
import { ProblemAlert } from "../../components/ProblemAlert";
import { useFlash } from "../../layout/flash";
import { deniedReason } from "../../permissions";
import { navigate } from "../../router";
import type { PageProps } from "../../routes";
import { usePrincipal } from "../../session";
import { GroupSelect, NumberField, useSubmit } from "../endpoints/fields";
import { EMPTY, problems, spaceBody, type SpaceForm } from "./form";
import { spacePath, spacesPath } from "./model";

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
  const wrong = problems(form);
  const errors: Record<string, string | undefined> = { ...submit.errors, ...wrong };
  const number = (label: string, field: "gpus" | "storage" | "idle", key: string, description: string) => (
    <NumberField label={label} description={description} value={form[field]} onChange={(v) => set({ [field]: v })} errorText={errors[key]} />
  );
  const text = (label: string, field: "cpu" | "memory", description: string) => (
    <FormField label={label} description={description} errorText={errors[field]}>
      <Input ariaLabel={label} value={form[field]} onChange={(e) => set({ [field]: e.detail.value })} />
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
            <GroupSelect cluster={cluster} value={form.group} onChange={(group) => set({ group })} errorText={errors.instance_group} anyLabel="Any group" />
          </SpaceBetween>
        </Container>
        <Container header={<Header variant="h2" description="What the space asks of its node; a space with GPUs names its instance group.">Resources</Header>}>
          <SpaceBetween size="m">
            <ColumnLayout columns={3}>
              {text("CPU", "cpu", "e.g. 2, 0.5 or 500m.")}
              {text("Memory", "memory", "e.g. 4Gi or 512Mi.")}
              {number("GPUs", "gpus", "gpus", "0 for a CPU space.")}
            </ColumnLayout>
            <ColumnLayout columns={3}>
              {number("Home volume (GiB)", "storage", "storage_gib", "Kept when the space stops or is deleted.")}
              {number("Idle stop (minutes)", "idle", "idle_minutes", "Stops after this long idle; 0 never.")}
            </ColumnLayout>
          </SpaceBetween>
        </Container>
      </SpaceBetween>
    </Form>
  );
}
