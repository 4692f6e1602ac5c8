// The deploy form's SGLang router (only for SGLang) and KEDA autoscaling on the engine's
// requests per pod; each is sent only when chosen, so the server's defaults stay the server's.
import Checkbox from "@cloudscape-design/components/checkbox";
import ColumnLayout from "@cloudscape-design/components/column-layout";
import Container from "@cloudscape-design/components/container";
import FormField from "@cloudscape-design/components/form-field";
import Header from "@cloudscape-design/components/header";
import Select from "@cloudscape-design/components/select";
import SpaceBetween from "@cloudscape-design/components/space-between";
import { NumberField, options } from "./fields";
import type { EndpointRequest } from "./model";

export interface Scaling {
  router: string;
  autoscale: boolean;
  min: string;
  max: string;
  metric: string;
  target: string;
  cooldown: string;
}

export const NO_SCALING: Scaling = { router: "none", autoscale: false, min: "1", max: "", metric: "running", target: "8", cooldown: "300" };

const ROUTERS = [
  { value: "none", label: "No router", description: "The Service spreads requests over the workers" },
  ...options(["cache_aware", "round_robin", "random", "power_of_two"]),
];
const METRICS = [
  { value: "running", label: "running", description: "Requests the engine is processing" },
  { value: "waiting", label: "waiting", description: "Requests queued in the engine" },
];

// The form's keys as the server's fields (a 422 names `autoscaling.<field>`).
const FIELD: Partial<Record<keyof Scaling, string>> = { min: "min_replicas", max: "max_replicas", target: "target", cooldown: "cooldown_seconds" };

type Autoscaling = NonNullable<EndpointRequest["autoscaling"]>;

/** The router and autoscaling part of the create body (engine: the router is SGLang's). */
export function scalingBody(s: Scaling, engine: string): Pick<EndpointRequest, "router" | "autoscaling"> {
  const body: Pick<EndpointRequest, "router" | "autoscaling"> = {};
  if (engine === "sglang" && s.router !== "none") body.router = s.router as EndpointRequest["router"];
  if (!s.autoscale) return body;
  const scaling: Autoscaling = { max_replicas: Number(s.max) };
  if (s.min.trim() && Number(s.min) !== 1) scaling.min_replicas = Number(s.min);
  if (s.metric !== "running") scaling.metric = s.metric as Autoscaling["metric"];
  if (s.target.trim() && Number(s.target) !== 8) scaling.target = Number(s.target);
  if (s.cooldown.trim() && Number(s.cooldown) !== 300) scaling.cooldown_seconds = Number(s.cooldown);
  body.autoscaling = scaling;
  return body;
}

interface Props {
  engine: string;
  value: Scaling;
  onChange: (change: Partial<Scaling>) => void;
  errors: Record<string, string>;
}

export function ScalingFields({ engine, value: s, onChange, errors }: Props) {
  const field = (label: string, key: keyof Scaling, description: string) => (
    <NumberField label={label} description={description} value={String(s[key])} onChange={(v) => onChange({ [key]: v })} errorText={errors[`autoscaling.${FIELD[key]}`]} />
  );
  return (
    <Container header={<Header variant="h2" description="KEDA scales the replicas on the engine's own gauge, through a ScaledObject podplane names after the endpoint.">Routing and autoscaling</Header>}>
      <SpaceBetween size="m">
        {engine === "sglang" && (
          <FormField label="SGLang router" description="A router Deployment in front of the workers; cache_aware sends a prompt where its prefix is cached." errorText={errors.router}>
            <Select ariaLabel="SGLang router" options={ROUTERS} selectedOption={ROUTERS.find((o) => o.value === s.router) ?? null} onChange={(e) => onChange({ router: e.detail.selectedOption.value ?? "none" })} />
          </FormField>
        )}
        <Checkbox checked={s.autoscale} onChange={(e) => onChange({ autoscale: e.detail.checked })}>
          Autoscale with KEDA
        </Checkbox>
        {s.autoscale && (
          <ColumnLayout columns={3}>
            {field("Min replicas", "min", "At least 1.")}
            {field("Max replicas", "max", "Up to 32.")}
            <FormField label="Metric" errorText={errors["autoscaling.metric"]}>
              <Select ariaLabel="Metric" options={METRICS} selectedOption={METRICS.find((o) => o.value === s.metric) ?? null} onChange={(e) => onChange({ metric: e.detail.selectedOption.value ?? "running" })} />
            </FormField>
            {field("Target per pod", "target", "Requests per pod KEDA aims for.")}
            {field("Cooldown seconds", "cooldown", "Wait before scaling in.")}
          </ColumnLayout>
        )}
      </SpaceBetween>
    </Container>
  );
}
