// Submit a training job from a recipe: the recipe's parameters with their defaults and bounds,
// only the changed ones sent; the server's refusals (a 422 naming the field) shown at the field.
// Once accepted, the job's page follows the submit operation.
import Button from "@cloudscape-design/components/button";
import Checkbox from "@cloudscape-design/components/checkbox";
import Container from "@cloudscape-design/components/container";
import Form from "@cloudscape-design/components/form";
import FormField from "@cloudscape-design/components/form-field";
import Header from "@cloudscape-design/components/header";
import Input from "@cloudscape-design/components/input";
import Select from "@cloudscape-design/components/select";
import SpaceBetween from "@cloudscape-design/components/space-between";
import StatusIndicator from "@cloudscape-design/components/status-indicator";
import { useQuery } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { api, unwrap } from "../../api/client";
import { ApiError, toProblem } from "../../api/problem";
import { ProblemAlert } from "../../components/ProblemAlert";
import { useFlash } from "../../layout/flash";
import { deniedReason } from "../../permissions";
import { navigate } from "../../router";
import type { PageProps } from "../../routes";
import { usePrincipal } from "../../session";
import { newKey } from "../clusters/mutation";
import { ParamField } from "./ParamField";
import { changedParams, fieldErrors, jobPath, jobsPath, SubmitError, type FieldProblem, type JobRequest, type Recipe } from "./model";

interface FormState {
  name: string;
  recipe: string;
  group: string;
  replicas: string;
  maxRestarts: string;
  elastic: boolean;
  params: Record<string, string>;
}

const EMPTY: FormState = { name: "", recipe: "", group: "", replicas: "", maxRestarts: "2", elastic: false, params: {} };

export function jobBody(f: FormState, recipe: Recipe): JobRequest {
  const body: JobRequest = { name: f.name.trim(), recipe: recipe.name, instance_group: f.group, params: changedParams(recipe, f.params) };
  if (f.replicas.trim() !== "" && Number(f.replicas) !== recipe.default_replicas) body.replicas = Number(f.replicas);
  if (f.maxRestarts.trim() !== "" && Number(f.maxRestarts) !== 2) body.max_restarts = Number(f.maxRestarts);
  if (f.elastic) body.elastic = true;
  return body;
}

export default function SubmitJob({ params }: PageProps) {
  const cluster = params.cluster;
  const denied = deniedReason(usePrincipal().role, "job.submit");
  const flash = useFlash();
  const key = useMemo(newKey, []);
  const recipes = useQuery({ queryKey: ["recipes"], queryFn: async () => unwrap(api.GET("/api/v1/recipes")) });
  const groups = useQuery({
    queryKey: ["instance-groups", cluster],
    queryFn: async () => unwrap(api.GET("/api/v1/clusters/{cluster}/instance-groups", { params: { path: { cluster } } })),
  });
  const [form, setForm] = useState<FormState>(EMPTY);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const recipe = recipes.data?.find((r) => r.name === form.recipe);
  const errors = error instanceof SubmitError ? fieldErrors(error.body) : {};
  const set = (change: Partial<FormState>) => setForm((f) => ({ ...f, ...change }));

  const submit = async () => {
    if (!recipe) return;
    setBusy(true);
    setError(null);
    const { data, error: body, response } = await api.POST("/api/v1/clusters/{cluster}/jobs", {
      params: { path: { cluster }, header: { "Idempotency-Key": key } },
      body: jobBody(form, recipe),
    });
    setBusy(false);
    if (!response.ok) return setError(new SubmitError(new ApiError(toProblem(body, response)), body as FieldProblem | undefined));
    const op = data && "id" in data ? data.id : null;
    flash.push({ type: "success", content: `Started: submit ${form.name} (${op}).` });
    navigate(`${jobPath(cluster, form.name.trim())}${op ? `?op=${op}` : ""}`);
  };

  if (recipes.isError) return <ProblemAlert error={recipes.error} header="Could not read the recipes" />;
  if (!recipes.data) return <StatusIndicator type="loading">Loading recipes</StatusIndicator>;
  const groupOptions = (groups.data ?? []).map((g) => ({ value: g.name, label: g.name, description: `${g.current_count ?? 0} × ${g.instance_type} (${g.capacity_type})` }));
  const recipeOptions = recipes.data.map((r) => ({ value: r.name, label: r.name, description: `${r.framework} · ${r.kind}` }));
  return (
    <Form
      header={<Header variant="h1" description={`A recipe run on one instance group of ${cluster}.`}>Submit job</Header>}
      actions={
        <SpaceBetween direction="horizontal" size="xs">
          <Button variant="link" onClick={() => navigate(jobsPath(cluster))}>Cancel</Button>
          <Button variant="primary" loading={busy} disabled={Boolean(denied) || !recipe || !form.group || !form.name.trim()} disabledReason={denied} onClick={() => void submit()}>
            Submit job
          </Button>
        </SpaceBetween>
      }
    >
      <SpaceBetween size="l">
        {error !== null && <ProblemAlert error={error} header="The job was not submitted" />}
        <Container header={<Header variant="h2">Job</Header>}>
          <SpaceBetween size="m">
            <FormField label="Job name" description="A DNS-1035 label (lowercase letters, digits and -, a letter first), up to 40 characters; its pods are named after it." errorText={errors.name}>
              <Input ariaLabel="Job name" value={form.name} onChange={(e) => set({ name: e.detail.value })} />
            </FormField>
            <FormField label="Recipe" description={recipe?.description} errorText={errors.recipe}>
              <Select
                ariaLabel="Recipe"
                placeholder="Choose a recipe"
                options={recipeOptions}
                selectedOption={recipeOptions.find((o) => o.value === form.recipe) ?? null}
                onChange={(e) => {
                  const r = recipes.data.find((x) => x.name === e.detail.selectedOption.value);
                  set({ recipe: r?.name ?? "", replicas: String(r?.default_replicas ?? ""), elastic: false, params: {} });
                }}
              />
            </FormField>
            <FormField label="Instance group" errorText={errors.instance_group} description="GPUs requested are checked against the group's free GPUs.">
              <Select
                ariaLabel="Instance group"
                placeholder="Choose a group"
                statusType={groups.isLoading ? "loading" : groups.isError ? "error" : "finished"}
                options={groupOptions}
                selectedOption={groupOptions.find((o) => o.value === form.group) ?? null}
                onChange={(e) => set({ group: e.detail.selectedOption.value ?? "" })}
              />
            </FormField>
            {recipe && (
              <>
                <FormField label="Replicas" description="Pods, one per node." errorText={errors.replicas}>
                  <Input ariaLabel="Replicas" type="number" value={form.replicas} onChange={(e) => set({ replicas: e.detail.value })} />
                </FormField>
                <FormField label="Restart budget" description="Restarts after a fault before the job fails." errorText={errors.max_restarts}>
                  <Input ariaLabel="Restart budget" type="number" value={form.maxRestarts} onChange={(e) => set({ maxRestarts: e.detail.value })} />
                </FormField>
                {recipe.elastic_capable && (
                  <FormField errorText={errors.elastic}>
                    <Checkbox checked={form.elastic} onChange={(e) => set({ elastic: e.detail.checked })}>
                      Elastic (refused on Spot groups)
                    </Checkbox>
                  </FormField>
                )}
              </>
            )}
          </SpaceBetween>
        </Container>
        {recipe && recipe.params.length > 0 && (
          <Container header={<Header variant="h2" description={`${recipe.framework}: defaults shown; only changed values are sent.`}>Parameters</Header>}>
            <SpaceBetween size="m">
              {recipe.params.map((p) => (
                <ParamField
                  key={p.name}
                  param={p}
                  value={form.params[p.name] ?? String(p.default)}
                  error={errors[`params.${p.name}`]}
                  onChange={(value) => set({ params: { ...form.params, [p.name]: value } })}
                />
              ))}
            </SpaceBetween>
          </Container>
        )}
      </SpaceBetween>
    </Form>
  );
}
