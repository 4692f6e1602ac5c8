// The wizard's decision steps. Choices come from the inspect endpoints: the region's AZs, the
// instance types EC2 offers in them (with GPU facts and price), the quota left, training plans.
import Container from "@cloudscape-design/components/container";
import FormField from "@cloudscape-design/components/form-field";
import Header from "@cloudscape-design/components/header";
import Input from "@cloudscape-design/components/input";
import RadioGroup from "@cloudscape-design/components/radio-group";
import Select, { type SelectProps } from "@cloudscape-design/components/select";
import SpaceBetween from "@cloudscape-design/components/space-between";
import { useQuery } from "@tanstack/react-query";
import { useEffect } from "react";
import { api, unwrap } from "../../api/client";
import { RULES } from "../../api/generated/rules";
import { ProblemAlert } from "../../components/ProblemAlert";
import { CAPACITY_TYPES, formatPrice, type CapacityType } from "./model";

export interface Decisions {
  name: string;
  region: string;
  availability_zone: string;
  instance_type: string;
  count: string;
  capacity_type: CapacityType;
  training_plan_arn: string;
}

interface StepProps {
  d: Decisions;
  update: (patch: Partial<Decisions>) => void;
  showErrors: boolean;
}

export function useZones() {
  return useQuery({
    queryKey: ["inspect", "zones"],
    queryFn: async () => unwrap(api.GET("/api/v1/availability-zones")),
    staleTime: 60_000,
  });
}

export function useInstanceTypes() {
  return useQuery({
    queryKey: ["inspect", "types"],
    queryFn: async () =>
      unwrap(api.GET("/api/v1/instance-types", { params: { query: { accelerated_only: true } } })),
    staleTime: 60_000,
  });
}

export function useTrainingPlans(enabled: boolean) {
  return useQuery({
    queryKey: ["inspect", "plans"],
    enabled,
    queryFn: async () => unwrap(api.GET("/api/v1/training-plans")),
  });
}

export function useQuota(type: string) {
  return useQuery({
    queryKey: ["inspect", "quota", type],
    enabled: Boolean(type),
    queryFn: async () =>
      unwrap(api.GET("/api/v1/quotas", { params: { query: { instance_type: type } } })),
  });
}

const opt = (value: string, label?: string): SelectProps.Option => ({ value, label: label ?? value });

export function NameStep({ d, update, showErrors }: StepProps) {
  const zones = useZones();
  const regions = [...new Set((zones.data ?? []).map((z) => z.region))];
  const first = regions[0];
  useEffect(() => {
    if (!d.region && first) update({ region: first });
  }, [d.region, first, update]);
  const nameOk = RULES.clusterName.test(d.name.trim());
  return (
    <Container header={<Header variant="h2">Name and region</Header>}>
      <SpaceBetween size="l">
        <FormField
          label="Cluster name"
          constraintText="1-63 lowercase letters, digits or '-', starting and ending with a letter or digit."
          errorText={showErrors && !nameOk ? "Enter a valid cluster name." : undefined}
        >
          <Input value={d.name} ariaLabel="Cluster name" autoFocus onChange={(e) => update({ name: e.detail.value })} />
        </FormField>
        <FormField label="Region" description="The region the control plane works in.">
          {zones.isError ? (
            <ProblemAlert error={zones.error} header="Could not read the region's AZs" />
          ) : (
            <Select
              ariaLabel="Region"
              statusType={zones.isLoading ? "loading" : "finished"}
              selectedOption={d.region ? opt(d.region) : null}
              options={regions.map((r) => opt(r))}
              onChange={(e) => update({ region: e.detail.selectedOption.value ?? "" })}
            />
          )}
        </FormField>
      </SpaceBetween>
    </Container>
  );
}

export function CapacityStep({ d, update, showErrors }: StepProps) {
  const zones = useZones();
  const types = useInstanceTypes();
  const plans = useTrainingPlans(d.capacity_type === "training-plan");
  const quota = useQuota(d.instance_type);
  const type = types.data?.find((t) => t.name === d.instance_type);
  const typeOptions = (types.data ?? []).map((t) => ({
    value: t.name,
    label: t.name,
    description: `${t.gpu_count} × ${t.gpu_model ?? "GPU"}${t.gpu_memory_gib ? ` ${t.gpu_memory_gib} GiB` : ""} · ${t.vcpu} vCPU · ${t.memory_gib} GiB · EFA ${t.efa_interfaces}`,
    tags: [formatPrice(t.price_per_hour), `AZs: ${t.offered_in.join(", ")}`],
  }));
  const zoneOptions = (zones.data ?? []).map((z) => {
    const offered = !type || type.offered_in.includes(z.name);
    return {
      value: z.name,
      label: z.name,
      description: z.id,
      disabled: !offered,
      disabledReason: offered ? undefined : `${d.instance_type} is not offered in ${z.name}.`,
    };
  });
  const left = quota.data?.available;
  const count = Number(d.count);
  const countError =
    !Number.isInteger(count) || count < 1
      ? "Enter a whole number of instances, 1 or more."
      : left != null && count > left
        ? `Only ${left} left in the quota.`
        : undefined;
  const planOptions = (plans.data ?? []).map((p) => ({
    value: p.arn,
    label: p.name ?? p.arn,
    description: `${p.instance_type ?? "?"} in ${p.availability_zone ?? "?"} · ${p.available_instances ?? "?"} of ${p.total_instances ?? "?"} available`,
    tags: p.status ? [p.status] : undefined,
  }));
  const pickPlan = (arn: string) => {
    const plan = plans.data?.find((p) => p.arn === arn);
    update({
      training_plan_arn: arn,
      ...(plan?.instance_type ? { instance_type: plan.instance_type } : {}),
      ...(plan?.availability_zone ? { availability_zone: plan.availability_zone } : {}),
    });
  };

  return (
    <Container header={<Header variant="h2">Capacity</Header>}>
      <SpaceBetween size="l">
        {types.isError && <ProblemAlert error={types.error} header="Could not list instance types" />}
        <FormField label="Capacity type" description="Decided once: a group's capacity type cannot change.">
          <RadioGroup
            ariaLabel="Capacity type"
            value={d.capacity_type}
            items={CAPACITY_TYPES}
            onChange={(e) => update({ capacity_type: e.detail.value as CapacityType })}
          />
        </FormField>
        {d.capacity_type === "training-plan" && (
          <FormField
            label="Training plan"
            description="The plan's instance type and AZ are used."
            errorText={showErrors && !d.training_plan_arn ? "Choose a training plan." : undefined}
          >
            <Select
              ariaLabel="Training plan"
              statusType={plans.isLoading ? "loading" : "finished"}
              empty="No training plans in this account."
              selectedOption={planOptions.find((o) => o.value === d.training_plan_arn) ?? null}
              options={planOptions}
              onChange={(e) => pickPlan(e.detail.selectedOption.value ?? "")}
            />
          </FormField>
        )}
        <FormField
          label="Instance type"
          description="Accelerated types, with their GPUs, EFA interfaces and On-Demand price."
          errorText={showErrors && !d.instance_type ? "Choose an instance type." : undefined}
        >
          <Select
            ariaLabel="Instance type"
            filteringType="auto"
            statusType={types.isLoading ? "loading" : "finished"}
            selectedOption={typeOptions.find((o) => o.value === d.instance_type) ?? null}
            options={typeOptions}
            onChange={(e) => {
              const name = e.detail.selectedOption.value ?? "";
              const next = types.data?.find((t) => t.name === name);
              const keepAz = next?.offered_in.includes(d.availability_zone);
              update({ instance_type: name, availability_zone: keepAz ? d.availability_zone : "" });
            }}
          />
        </FormField>
        <FormField
          label="Availability zone"
          description={type ? `AZs that offer ${type.name}: ${type.offered_in.join(", ")}.` : "Choose an instance type first."}
          errorText={showErrors && !d.availability_zone ? "Choose an availability zone." : undefined}
        >
          <Select
            ariaLabel="Availability zone"
            disabled={!type}
            selectedOption={zoneOptions.find((o) => o.value === d.availability_zone) ?? null}
            options={zoneOptions}
            onChange={(e) => update({ availability_zone: e.detail.selectedOption.value ?? "" })}
          />
        </FormField>
        <FormField
          label="Instance count"
          description={
            quota.data
              ? `Quota left for ${quota.data.instance_type}: ${left ?? "no limit"} (limit ${quota.data.limit ?? "-"}, in use ${quota.data.in_use}).`
              : undefined
          }
          errorText={showErrors || d.count !== "1" ? countError : undefined}
        >
          <Input type="number" inputMode="numeric" ariaLabel="Instance count" value={d.count} onChange={(e) => update({ count: e.detail.value })} />
        </FormField>
      </SpaceBetween>
    </Container>
  );
}
