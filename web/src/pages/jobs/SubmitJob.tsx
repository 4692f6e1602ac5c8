// Submit a training job from a recipe (its parameters with their defaults and bounds, only the
// changed ones sent) or your own container (image, kind, argv one word per line, environment);
// the server's refusals (a 422 naming the field) shown at the field. Once accepted, the job's
// page follows the submit operation. Opened with ?space=<name> (a dev space's page), the
// container is the space's image and group, running a script from the bucket.
import Alert from "@cloudscape-design/components/alert";
import Button from "@cloudscape-design/components/button";
import Checkbox from "@cloudscape-design/components/checkbox";
import Container from "@cloudscape-design/components/container";
import Form from "@cloudscape-design/components/form";
import FormField from "@cloudscape-design/components/form-field";
import Header from "@cloudscape-design/components/header";
import Input from "@cloudscape-design/components/input";
import RadioGroup from "@cloudscape-design/components/radio-group";
import Select from "@cloudscape-design/components/select";
import SpaceBetween from "@cloudscape-design/components/space-between";
import StatusIndicator from "@cloudscape-design/components/status-indicator";
import Textarea from "@cloudscape-design/components/textarea";
import { useQuery } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { api, unwrap } from "../../api/client";
import { ApiError, toProblem } from "../../api/problem";
import { ProblemAlert } from "../../components/ProblemAlert";
import { useFlash } from "../../layout/flash";
import { deniedReason } from "../../permissions";
import { navigate, useSearch } from "../../router";
import type { PageProps } from "../../routes";
import { usePrincipal } from "../../session";
import { newKey } from "../clusters/mutation";
import { ParamField } from "./ParamField";
import { changedParams, envOf, fieldErrors, firstError, jobPath, jobsPath, lines, SubmitError, type FieldProblem, type JobKind, type JobRequest, type Recipe } from "./model";

interface FormState {
  name: string;
  source: "recipe" | "container";
  recipe: string;
  image: string;
  kind: JobKind;
  command: string;
  env: string;
  group: string;
  replicas: string;
  maxRestarts: string;
  elastic: boolean;
  params: Record<string, string>;
}

const EMPTY: FormState = {
  name: "", source: "recipe", recipe: "", image: "", kind: "PyTorchJob", command: "", env: "", group: "",
  replicas: "", maxRestarts: "2", elastic: false, params: {},
};
const KINDS: JobKind[] = ["PyTorchJob", "HyperPodPyTorchJob", "RayJob"];

/** The request body: the recipe's changed parameters, or your own container; shared fields
 * only when they differ from the server's defaults. */
export function jobBody(f: FormState, recipe: Recipe | undefined): JobRequest {
  const body: JobRequest = { name: f.name.trim(), instance_group: f.group };
  if (recipe) Object.assign(body, { recipe: recipe.name, params: changedParams(recipe, f.params) });
  else body.container = { kind: f.kind, image: f.image.trim(), command: lines(f.command), env: envOf(f.env) };
  if (f.replicas.trim() !== "" && Number(f.replicas) !== (recipe?.default_replicas ?? 1)) body.replicas = Number(f.replicas);
  if (f.maxRestarts.trim() !== "" && Number(f.maxRestarts) !== 2) body.max_restarts = Number(f.maxRestarts);
  if (f.elastic) body.elastic = true;
  return body;
}

/** A job from a dev space (its page's "Run a script as a job"): the space's image and group,
 * and `python` on a script under the bucket paths the space and jobs both mount. */
function fromSpace(space: { image: string; instance_group?: string | null }): Partial<FormState> {
  return { source: "container", image: space.image, kind: "PyTorchJob", command: "python\n/data/", group: space.instance_group ?? "" };
}

export default function SubmitJob({ params }: PageProps) {
  const cluster = params.cluster;
  const spaceName = useSearch().get("space");
  const denied = deniedReason(usePrincipal().role, "job.submit");
  const flash = useFlash();
  const key = useMemo(newKey, []);
  const recipes = useQuery({ queryKey: ["recipes"], queryFn: async () => unwrap(api.GET("/api/v1/recipes")) });
  const groups = useQuery({
    queryKey: ["instance-groups", cluster],
    queryFn: async () => unwrap(api.GET("/api/v1/clusters/{cluster}/instance-groups", { params: { path: { cluster } } })),
  });
  const [form, setForm] = useState<FormState>(EMPTY);
  const space = useQuery({
    queryKey: ["space-for-job", cluster, spaceName],
    enabled: Boolean(spaceName),
    queryFn: async () => unwrap(api.GET("/api/v1/clusters/{cluster}/spaces/{name}", { params: { path: { cluster, name: spaceName ?? "" } } })),
  });
  const [prefilled, setPrefilled] = useState(false);
  if (space.data && !prefilled) {
    setPrefilled(true);
    setForm((f) => ({ ...f, ...fromSpace(space.data) }));
  }
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const own = form.source === "container";
  const recipe = own ? undefined : recipes.data?.find((r) => r.name === form.recipe);
  const ready = own ? form.image.trim() !== "" && lines(form.command).length > 0 : Boolean(recipe);
  const elasticCapable = own ? form.kind === "HyperPodPyTorchJob" : Boolean(recipe?.elastic_capable);
  const errors = error instanceof SubmitError ? fieldErrors(error.body) : {};
  const set = (change: Partial<FormState>) => setForm((f) => ({ ...f, ...change }));

  const submit = async () => {
    if (!ready) return;
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
      header={<Header variant="h1" description={`A recipe, or your own container, run on one instance group of ${cluster}.`}>Submit job</Header>}
      actions={
        <SpaceBetween direction="horizontal" size="xs">
          <Button variant="link" onClick={() => navigate(jobsPath(cluster))}>Cancel</Button>
          <Button variant="primary" loading={busy} disabled={Boolean(denied) || !ready || !form.group || !form.name.trim()} disabledReason={denied} onClick={() => void submit()}>
            Submit job
          </Button>
        </SpaceBetween>
      }
    >
      <SpaceBetween size="l">
        {error !== null && <ProblemAlert error={error} header="The job was not submitted" />}
        {spaceName && (
          <Alert type="info" header={`From dev space ${spaceName}`}>
            Its image, on its instance group, with the cluster bucket at the paths the space sees (/data, /models, /outputs). Give the script's path there: the space's home is its own volume, which a job's pods cannot mount, so save the script under /data first.
          </Alert>
        )}
        <Container header={<Header variant="h2">Job</Header>}>
          <SpaceBetween size="m">
            <FormField label="Job name" description="A DNS-1035 label (lowercase letters, digits and -, a letter first), up to 40 characters; its pods are named after it." errorText={errors.name}>
              <Input ariaLabel="Job name" value={form.name} onChange={(e) => set({ name: e.detail.value })} />
            </FormField>
            <FormField label="Workload">
              <RadioGroup
                ariaLabel="Workload"
                value={form.source}
                onChange={(e) => set({ source: e.detail.value as FormState["source"], elastic: false, replicas: "" })}
                items={[
                  { value: "recipe", label: "Recipe", description: "A training recipe podplane ships, with its parameters." },
                  { value: "container", label: "Your own container", description: "Your image and command, with the same mounts (/data, /models, /checkpoints, /outputs), placement and restart budget." },
                ]}
              />
            </FormField>
            {own ? (
              <OwnContainer form={form} set={set} errors={errors} />
            ) : (
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
            )}
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
            {ready && (
              <>
                <FormField label="Replicas" description="Pods, one per node." errorText={errors.replicas}>
                  <Input ariaLabel="Replicas" type="number" value={form.replicas} onChange={(e) => set({ replicas: e.detail.value })} />
                </FormField>
                <FormField label="Restart budget" description="Restarts after a fault before the job fails." errorText={errors.max_restarts}>
                  <Input ariaLabel="Restart budget" type="number" value={form.maxRestarts} onChange={(e) => set({ maxRestarts: e.detail.value })} />
                </FormField>
                {elasticCapable && (
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

interface OwnProps {
  form: FormState;
  set: (change: Partial<FormState>) => void;
  errors: Record<string, string>;
}

/** Your own container: the image, the job kind, the argv one word per line (no shell reads it)
 * and the environment, NAME=value per line. */
function OwnContainer({ form, set, errors }: OwnProps) {
  const kindOptions = KINDS.map((k) => ({ value: k, label: k }));
  return (
    <>
      <FormField label="Image" description="registry/path:tag; the nodes must be able to pull it." errorText={errors["container.image"]}>
        <Input ariaLabel="Image" value={form.image} onChange={(e) => set({ image: e.detail.value })} />
      </FormField>
      <FormField label="Job kind" description="HyperPodPyTorchJob runs hyperpodrun (the elastic agent must be in the image); RayJob needs the kuberay feature." errorText={errors["container.kind"]}>
        <Select
          ariaLabel="Job kind"
          options={kindOptions}
          selectedOption={kindOptions.find((o) => o.value === form.kind) ?? null}
          onChange={(e) => set({ kind: (e.detail.selectedOption.value ?? "PyTorchJob") as JobKind, elastic: false })}
        />
      </FormField>
      <FormField label="Command" description="One word per line, e.g. python, then /data/my_script.py." errorText={firstError(errors, "container.command")}>
        <Textarea ariaLabel="Command" rows={4} value={form.command} onChange={(e) => set({ command: e.detail.value })} />
      </FormField>
      <FormField label="Environment" description="NAME=value, one per line (optional)." errorText={firstError(errors, "container.env")}>
        <Textarea ariaLabel="Environment" rows={2} value={form.env} onChange={(e) => set({ env: e.detail.value })} />
      </FormField>
    </>
  );
}
