// The space templates of one cluster: what each allows (images, maxima) and gives a space that
// asks for nothing. Everyone sees them; an admin creates, edits (the whole template, PUT) and
// deletes them. Templates made with hyp are listed too (made by "other").
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import ColumnLayout from "@cloudscape-design/components/column-layout";
import FormField from "@cloudscape-design/components/form-field";
import Header from "@cloudscape-design/components/header";
import Input from "@cloudscape-design/components/input";
import Modal from "@cloudscape-design/components/modal";
import SpaceBetween from "@cloudscape-design/components/space-between";
import Table from "@cloudscape-design/components/table";
import Textarea from "@cloudscape-design/components/textarea";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap } from "../../api/client";
import { ProblemAlert } from "../../components/ProblemAlert";
import { useFlash } from "../../layout/flash";
import { deniedReason } from "../../permissions";
import type { PageProps } from "../../routes";
import { usePrincipal } from "../../session";
import { useSubmit } from "../endpoints/fields";
import { type Template, type TemplateRequest, templatesKey } from "./model";

// Field, label; the form keeps every value as typed text.
const FIELDS = [
  ["cpu", "Default CPU"], ["max_cpu", "Max CPU"], ["memory", "Default memory"], ["max_memory", "Max memory"],
  ["max_gpus", "Max GPUs"], ["storage_gib", "Default home (GiB)"], ["max_storage_gib", "Max home (GiB)"], ["idle_minutes", "Idle stop (minutes, 0 never)"],
] as const;
type Field = (typeof FIELDS)[number][0];
type TemplateForm = Record<Field | "name" | "images", string>;
const NUMBERS = new Set<Field>(["max_gpus", "storage_gib", "max_storage_gib", "idle_minutes"]);

function formOf(t: Template | null): TemplateForm {
  const text = (v: string | number | null | undefined) => (v == null ? "" : String(v));
  return {
    name: t?.name ?? "", images: (t?.images ?? []).join("\n"),
    cpu: text(t?.cpu), max_cpu: text(t?.max_cpu), memory: text(t?.memory), max_memory: text(t?.max_memory),
    max_gpus: text(t?.max_gpus), storage_gib: text(t?.storage_gib), max_storage_gib: text(t?.max_storage_gib), idle_minutes: text(t?.idle_minutes),
  };
}

/** The PUT body: what was filled in; the rest takes the server's defaults. */
function templateBody(f: TemplateForm): TemplateRequest {
  const body: Record<string, unknown> = {};
  const images = f.images.split("\n").map((i) => i.trim()).filter(Boolean);
  if (images.length) body.images = images;
  for (const [field] of FIELDS) {
    const v = f[field].trim();
    if (v) body[field] = NUMBERS.has(field) ? Number(v) : v;
  }
  return body as TemplateRequest;
}

function TemplateModal({ cluster, editing, onClose }: { cluster: string; editing: Template | null; onClose: () => void }) {
  const flash = useFlash();
  const client = useQueryClient();
  const [form, setForm] = useState<TemplateForm>(formOf(editing));
  const name = form.name.trim();
  const submit = useSubmit(
    () => api.PUT("/api/v1/clusters/{cluster}/space-templates/{name}", { params: { path: { cluster, name } }, body: templateBody(form) }),
    () => {
      flash.push({ type: "success", content: `Saved template ${name}.` });
      void client.invalidateQueries({ queryKey: templatesKey(cluster) });
      onClose();
    },
  );
  return (
    <Modal
      visible
      onDismiss={onClose}
      header={editing ? `Edit template ${editing.name}` : "New template"}
      footer={
        <Box float="right">
          <SpaceBetween direction="horizontal" size="xs">
            <Button variant="link" onClick={onClose}>Cancel</Button>
            <Button variant="primary" loading={submit.busy} disabled={!name} onClick={submit.go}>Save template</Button>
          </SpaceBetween>
        </Box>
      }
    >
      <SpaceBetween size="m">
        {submit.error !== null && <ProblemAlert error={submit.error} header="The template was not saved" />}
        <FormField label="Template name" errorText={submit.errors.name}>
          <Input ariaLabel="Template name" value={form.name} disabled={Boolean(editing)} onChange={(e) => setForm({ ...form, name: e.detail.value })} />
        </FormField>
        <FormField label="Allowed images" description="One per line; the first is the default. Empty: SageMaker Distribution (CPU and GPU)." errorText={submit.errors.images}>
          <Textarea ariaLabel="Allowed images" rows={2} value={form.images} onChange={(e) => setForm({ ...form, images: e.detail.value })} />
        </FormField>
        <ColumnLayout columns={2}>
          {FIELDS.map(([field, label]) => (
            <FormField key={field} label={label} errorText={submit.errors[field]}>
              <Input ariaLabel={label} value={form[field]} placeholder="default" onChange={(e) => setForm({ ...form, [field]: e.detail.value })} />
            </FormField>
          ))}
        </ColumnLayout>
        <Box variant="small" color="text-body-secondary">Every space made from it mounts the cluster bucket at /data, /models and /outputs.</Box>
      </SpaceBetween>
    </Modal>
  );
}

function DeleteTemplateModal({ cluster, template, onClose }: { cluster: string; template: Template; onClose: () => void }) {
  const flash = useFlash();
  const client = useQueryClient();
  const submit = useSubmit(
    () => api.DELETE("/api/v1/clusters/{cluster}/space-templates/{name}", { params: { path: { cluster, name: template.name } } }),
    () => {
      flash.push({ type: "success", content: `Deleted template ${template.name}.` });
      void client.invalidateQueries({ queryKey: templatesKey(cluster) });
      onClose();
    },
  );
  return (
    <Modal
      visible
      onDismiss={onClose}
      header={`Delete template ${template.name}?`}
      footer={
        <Box float="right">
          <SpaceBetween direction="horizontal" size="xs">
            <Button variant="link" onClick={onClose}>Cancel</Button>
            <Button variant="primary" loading={submit.busy} onClick={submit.go}>Delete template</Button>
          </SpaceBetween>
        </Box>
      }
    >
      <SpaceBetween size="m">
        <Box variant="p">New spaces can no longer pick it. A template spaces still use is not deleted.</Box>
        {submit.error !== null && <ProblemAlert error={submit.error} header="The template was not deleted" />}
      </SpaceBetween>
    </Modal>
  );
}

export default function SpaceTemplates({ params }: PageProps) {
  const cluster = params.cluster;
  const denied = deniedReason(usePrincipal().role, "space_template.set");
  const [selected, setSelected] = useState<Template[]>([]);
  const [modal, setModal] = useState<"new" | "edit" | "delete" | null>(null);
  const query = useQuery({
    queryKey: templatesKey(cluster),
    queryFn: async () => unwrap(api.GET("/api/v1/clusters/{cluster}/space-templates", { params: { path: { cluster } } })),
  });
  const items = query.data ?? [];
  const one = selected.length === 1 ? selected[0] : null;
  const bound = (value: string | number | null | undefined, max: string | number | null | undefined) => `${value ?? "-"} (max ${max ?? "any"})`;
  return (
    <>
      {query.isError && <ProblemAlert error={query.error} header={`Could not list the space templates of ${cluster}`} />}
      <Table
        variant="full-page"
        loading={query.isLoading}
        loadingText="Loading templates"
        items={items}
        trackBy="name"
        selectionType="single"
        selectedItems={selected}
        onSelectionChange={(e) => setSelected(e.detail.selectedItems)}
        header={
          <Header
            variant="h1"
            counter={`(${items.length})`}
            description="What spaces made from a template may use, and what they get when they ask for nothing."
            actions={
              <SpaceBetween direction="horizontal" size="xs">
                <Button disabled={Boolean(denied) || !one} disabledReason={denied} onClick={() => setModal("delete")}>Delete</Button>
                <Button disabled={Boolean(denied) || !one} disabledReason={denied} onClick={() => setModal("edit")}>Edit</Button>
                <Button variant="primary" disabled={Boolean(denied)} disabledReason={denied} onClick={() => setModal("new")}>New template</Button>
              </SpaceBetween>
            }
          >
            Space templates
          </Header>
        }
        columnDefinitions={[
          { id: "name", header: "Name", isRowHeader: true, cell: (t) => t.name },
          { id: "image", header: "Default image", cell: (t) => t.images[0] ?? "any" },
          { id: "cpu", header: "CPU", cell: (t) => bound(t.cpu, t.max_cpu) },
          { id: "memory", header: "Memory", cell: (t) => bound(t.memory, t.max_memory) },
          { id: "gpus", header: "Max GPUs", cell: (t) => t.max_gpus ?? "any" },
          { id: "home", header: "Home (GiB)", cell: (t) => bound(t.storage_gib, t.max_storage_gib) },
          { id: "idle", header: "Idle stop", cell: (t) => (t.idle_minutes == null ? "-" : t.idle_minutes ? `${t.idle_minutes} min` : "never") },
          { id: "made", header: "Made by", cell: (t) => (t.made_by === "podplane" ? "podplane" : "other (hyp, kubectl)") },
        ]}
        empty={
          <Box textAlign="center" color="inherit">
            <Box variant="p">No templates: spaces get podplane's defaults.</Box>
          </Box>
        }
      />
      {(modal === "new" || (modal === "edit" && one)) && <TemplateModal cluster={cluster} editing={modal === "edit" ? one : null} onClose={() => setModal(null)} />}
      {modal === "delete" && one && <DeleteTemplateModal cluster={cluster} template={one} onClose={() => { setModal(null); setSelected([]); }} />}
    </>
  );
}
