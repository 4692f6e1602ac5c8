// Add an instance group: the decisions made together in one create (capacity type, EFA-only
// and subnet placement cannot change later). Only decisions that differ from the defaults
// are sent; the server derives the rest and says what it chose.
import Box from "@cloudscape-design/components/box";
import Checkbox from "@cloudscape-design/components/checkbox";
import FormField from "@cloudscape-design/components/form-field";
import Input from "@cloudscape-design/components/input";
import RadioGroup from "@cloudscape-design/components/radio-group";
import Select from "@cloudscape-design/components/select";
import { useState } from "react";
import { api } from "../../api/client";
import { RULES } from "../../api/generated/rules";
import { ProblemAlert } from "../../components/ProblemAlert";
import { useInstanceTypes, useTrainingPlans, useZones } from "./CreateSteps";
import { ActionModal, useRun } from "./GroupModals";
import { CAPACITY_TYPES, formatPrice, specOf, type CapacityType, type ClusterDetail, type NewGroupRequest } from "./model";

type Placement = "auto" | "new" | "existing";

interface Form {
  name: string;
  instance_type: string;
  count: string;
  availability_zone: string;
  capacity_type: CapacityType;
  training_plan_arn: string;
  efa_only: boolean;
  placement: Placement;
  subnet_id: string;
}

export type NewGroupBody = NewGroupRequest;

export function newGroupBody(f: Form): NewGroupBody {
  const body: NewGroupBody = { name: f.name.trim(), instance_type: f.instance_type, count: Number(f.count) };
  if (f.availability_zone) body.availability_zone = f.availability_zone;
  if (f.capacity_type !== "on-demand") body.capacity_type = f.capacity_type;
  if (f.capacity_type === "training-plan" && f.training_plan_arn) body.training_plan_arn = f.training_plan_arn;
  if (f.efa_only) body.efa_only = true;
  if (f.placement === "new") body.new_subnet = true;
  if (f.placement === "existing" && f.subnet_id.trim()) body.subnet_id = f.subnet_id.trim();
  return body;
}

const PLACEMENTS = [
  { value: "auto", label: "Automatic", description: "The control plane decides: the compute subnet in the AZ when it has room, else a new /20." },
  { value: "new", label: "New /20 compute subnet", description: "The control plane picks a free CIDR and tags it." },
  { value: "existing", label: "Existing subnet", description: "A subnet id in the cluster's VPC." },
];

interface Props {
  cluster: ClusterDetail;
  onClose: () => void;
  onDone: (opId: string | null, label: string) => void;
}

export function AddGroupModal({ cluster, onClose, onDone }: Props) {
  const [f, setF] = useState<Form>({
    name: "", instance_type: "", count: "1", availability_zone: "", capacity_type: "on-demand",
    training_plan_arn: "", efa_only: false, placement: "auto", subnet_id: "",
  });
  const set = (patch: Partial<Form>) => setF((old) => ({ ...old, ...patch }));
  const types = useInstanceTypes();
  const zones = useZones();
  const plans = useTrainingPlans(f.capacity_type === "training-plan");
  const type = types.data?.find((t) => t.name === f.instance_type);
  const body = newGroupBody(f);
  const run = useRun(onDone, `add group ${body.name}`, () =>
    api.POST("/api/v1/clusters/{cluster}/instance-groups", {
      params: { path: { cluster: cluster.name }, header: { "Idempotency-Key": run.key } },
      body,
    }),
  );
  const valid =
    RULES.groupName.test(body.name) && Boolean(f.instance_type) &&
    Number.isInteger(body.count) && body.count >= 1 &&
    (f.capacity_type !== "training-plan" || Boolean(f.training_plan_arn)) &&
    (f.placement !== "existing" || RULES.subnetId.test(f.subnet_id.trim()));
  const defaultAz = specOf(cluster)?.availability_zone;
  const typeOptions = (types.data ?? []).map((t) => ({
    value: t.name, label: t.name, tags: [`${t.gpu_count} × ${t.gpu_model ?? "GPU"}`, `EFA ${t.efa_interfaces}`, formatPrice(t.price_per_hour)],
  }));
  const zoneOptions = [
    { value: "", label: `Default (${defaultAz ?? "the first group's AZ"})` },
    ...(zones.data ?? []).map((z) => {
      const offered = !type || type.offered_in.includes(z.name);
      return { value: z.name, label: z.name, disabled: !offered, disabledReason: offered ? undefined : `${f.instance_type} is not offered there.` };
    }),
  ];
  const planOptions = (plans.data ?? []).map((p) => ({ value: p.arn, label: p.name ?? p.arn, description: `${p.instance_type ?? "?"} in ${p.availability_zone ?? "?"}` }));

  return (
    <ActionModal header="Add instance group" action="Add group" busy={run.busy} disabled={!valid} onClose={onClose} onAction={run.go}>
      <FormField label="Group name" constraintText="Lowercase letters, digits and '-'.">
        <Input ariaLabel="Group name" value={f.name} autoFocus onChange={(e) => set({ name: e.detail.value })} />
      </FormField>
      <FormField label="Instance type">
        <Select
          ariaLabel="Instance type"
          filteringType="auto"
          statusType={types.isLoading ? "loading" : "finished"}
          selectedOption={typeOptions.find((o) => o.value === f.instance_type) ?? null}
          options={typeOptions}
          onChange={(e) => set({ instance_type: e.detail.selectedOption.value ?? "", availability_zone: "" })}
        />
      </FormField>
      <FormField label="Instance count">
        <Input type="number" inputMode="numeric" ariaLabel="Instance count" value={f.count} onChange={(e) => set({ count: e.detail.value })} />
      </FormField>
      <FormField label="Availability zone" description="A training plan's AZ overrides it.">
        <Select
          ariaLabel="Availability zone"
          selectedOption={zoneOptions.find((o) => o.value === f.availability_zone) ?? zoneOptions[0]}
          options={zoneOptions}
          onChange={(e) => set({ availability_zone: e.detail.selectedOption.value ?? "" })}
        />
      </FormField>
      <FormField label="Capacity type" description="Cannot change after the group is created.">
        <RadioGroup ariaLabel="Capacity type" value={f.capacity_type} items={CAPACITY_TYPES} onChange={(e) => set({ capacity_type: e.detail.value as CapacityType })} />
      </FormField>
      {f.capacity_type === "training-plan" && (
        <FormField label="Training plan">
          <Select
            ariaLabel="Training plan"
            empty="No training plans in this account."
            statusType={plans.isLoading ? "loading" : "finished"}
            selectedOption={planOptions.find((o) => o.value === f.training_plan_arn) ?? null}
            options={planOptions}
            onChange={(e) => set({ training_plan_arn: e.detail.selectedOption.value ?? "" })}
          />
        </FormField>
      )}
      <Checkbox
        checked={f.efa_only}
        disabled={type !== undefined && type.efa_interfaces === 0}
        description={type && type.efa_interfaces === 0 ? `${type.name} has no EFA interface.` : "Network interface is EFA-only (no ENA IP traffic). Cannot change later."}
        onChange={(e) => set({ efa_only: e.detail.checked })}
      >
        EFA-only interface
      </Checkbox>
      <FormField label="Subnet">
        <RadioGroup ariaLabel="Subnet" value={f.placement} items={PLACEMENTS} onChange={(e) => set({ placement: e.detail.value as Placement })} />
      </FormField>
      {f.placement === "existing" && (
        <FormField label="Subnet id">
          <Input ariaLabel="Subnet id" placeholder="subnet-0123456789abcdef0" value={f.subnet_id} onChange={(e) => set({ subnet_id: e.detail.value })} />
        </FormField>
      )}
      <Box variant="small">Request body: {JSON.stringify(body)}</Box>
      {run.error !== null && <ProblemAlert error={run.error} header="The group was not added" />}
    </ActionModal>
  );
}
