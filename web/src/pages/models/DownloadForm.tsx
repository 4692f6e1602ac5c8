// Start a model download into the cluster's bucket (s3://<bucket>/models/<name>/): a Hugging
// Face repository id (or an s3:// prefix of the bucket), an optional revision, and an optional
// token. The token is a password field, sent once and cleared: the server keeps it in a
// Kubernetes Secret and never returns it.
import Button from "@cloudscape-design/components/button";
import ColumnLayout from "@cloudscape-design/components/column-layout";
import Container from "@cloudscape-design/components/container";
import FormField from "@cloudscape-design/components/form-field";
import Header from "@cloudscape-design/components/header";
import Input from "@cloudscape-design/components/input";
import SpaceBetween from "@cloudscape-design/components/space-between";
import { useState } from "react";
import { api } from "../../api/client";
import { ProblemAlert } from "../../components/ProblemAlert";
import { useFlash } from "../../layout/flash";
import { useSubmit } from "../endpoints/fields";
import type { DownloadRequest } from "./model";

interface FormState {
  name: string;
  source: string;
  revision: string;
  token: string;
}

const EMPTY: FormState = { name: "", source: "", revision: "", token: "" };

/** The download body: the token only when one was typed. */
export function downloadBody(f: FormState): DownloadRequest {
  const body: DownloadRequest = { name: f.name.trim(), source: f.source.trim() };
  if (f.revision.trim()) body.revision = f.revision.trim();
  if (f.token) body.hf_token = f.token;
  return body;
}

export function DownloadForm({ cluster, denied, onStarted }: { cluster: string; denied?: string; onStarted: (op: string | null) => void }) {
  const flash = useFlash();
  const [form, setForm] = useState<FormState>(EMPTY);
  const set = (change: Partial<FormState>) => setForm((f) => ({ ...f, ...change }));
  const submit = useSubmit(
    (key) => api.POST("/api/v1/clusters/{cluster}/models", { params: { path: { cluster }, header: { "Idempotency-Key": key } }, body: downloadBody(form) }),
    (op) => {
      flash.push({ type: "success", content: `Started: download ${form.source.trim()} to models/${form.name.trim()}/ (${op}).` });
      setForm(EMPTY);
      onStarted(op);
    },
  );
  const errors = submit.errors;
  return (
    <Container header={<Header variant="h2" description="A Kubernetes Job copies the files; the operation watches that Job and checks the objects landed.">Download a model</Header>}>
      <SpaceBetween size="m">
        {submit.error !== null && <ProblemAlert error={submit.error} header="The download did not start" />}
        <ColumnLayout columns={2}>
          <FormField label="Hugging Face repository" description="org/name, or an s3:// prefix of the cluster's bucket." errorText={errors.source}>
            <Input ariaLabel="Hugging Face repository" value={form.source} placeholder="Qwen/Qwen2.5-0.5B-Instruct" onChange={(e) => set({ source: e.detail.value })} />
          </FormField>
          <FormField label="Folder name" description="Under models/ in the bucket: an endpoint's model is s3://<bucket>/models/<name>/." errorText={errors.name}>
            <Input ariaLabel="Folder name" value={form.name} onChange={(e) => set({ name: e.detail.value })} />
          </FormField>
          <FormField label="Revision" description="Optional: a branch, tag or commit." errorText={errors.revision}>
            <Input ariaLabel="Revision" value={form.revision} onChange={(e) => set({ revision: e.detail.value })} />
          </FormField>
          <FormField label="Hugging Face token" description="Optional, for gated models: kept in a Secret, never shown again." errorText={errors.hf_token}>
            <Input ariaLabel="Hugging Face token" type="password" autoComplete={false} value={form.token} onChange={(e) => set({ token: e.detail.value })} />
          </FormField>
        </ColumnLayout>
        <Button variant="primary" loading={submit.busy} disabled={Boolean(denied) || !form.name.trim() || !form.source.trim()} disabledReason={denied} onClick={submit.go}>
          Download
        </Button>
      </SpaceBetween>
    </Container>
  );
}
