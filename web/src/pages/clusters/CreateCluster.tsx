// Create a cluster: only the decisions (name, region, AZ, instance type, count, capacity type,
// training plan), with the choices read from the inspect endpoints; the plan (dry run) is
// shown before submitting; then the cluster page follows the operation.
import Wizard from "@cloudscape-design/components/wizard";
import { useQuery } from "@tanstack/react-query";
import { useCallback, useMemo, useState } from "react";
import { api, unwrap } from "../../api/client";
import { RULES } from "../../api/generated/rules";
import { navigate } from "../../router";
import { CapacityStep, NameStep, type Decisions } from "./CreateSteps";
import { PlanReview } from "./PlanReview";
import type { ClusterRequest } from "./model";

const START: Decisions = {
  name: "",
  region: "",
  availability_zone: "",
  instance_type: "",
  count: "1",
  capacity_type: "on-demand",
  training_plan_arn: "",
};

export type ClusterBody = ClusterRequest;

export function bodyOf(d: Decisions, accepted: string[]): ClusterBody {
  const body: ClusterBody = {
    name: d.name.trim(),
    region: d.region,
    availability_zone: d.availability_zone,
    instance_type: d.instance_type,
    count: Number(d.count),
    capacity_type: d.capacity_type,
  };
  if (d.capacity_type === "training-plan" && d.training_plan_arn) body.training_plan_arn = d.training_plan_arn;
  if (accepted.length) body.override_warnings = accepted;
  return body;
}

export default function CreateCluster() {
  const [active, setActive] = useState(0);
  const [d, setD] = useState<Decisions>(START);
  const [accepted, setAccepted] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [showErrors, setShowErrors] = useState(false);
  const key = useMemo(() => crypto.randomUUID(), []);
  const update = useCallback((patch: Partial<Decisions>) => setD((old) => ({ ...old, ...patch })), []);

  const body = bodyOf(d, accepted);
  const plan = useQuery({
    queryKey: ["cluster-plan", body],
    enabled: active === 2,
    queryFn: async () =>
      unwrap(api.POST("/api/v1/cluster-plans", { body })),
  });

  const stepValid = [
    RULES.clusterName.test(d.name.trim()) && Boolean(d.region),
    Boolean(d.instance_type && d.availability_zone) && Number(d.count) >= 1 &&
      (d.capacity_type !== "training-plan" || Boolean(d.training_plan_arn)),
  ];

  const submit = async () => {
    if (!plan.data || plan.data.blocked) return;
    setBusy(true);
    setError(null);
    try {
      await unwrap(api.POST("/api/v1/clusters", { body, params: { header: { "Idempotency-Key": key } } }));
      navigate(`/clusters/${body.name}`);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <Wizard
      activeStepIndex={active}
      isLoadingNextStep={busy}
      onCancel={() => navigate("/clusters")}
      onSubmit={() => void submit()}
      onNavigate={(e) => {
        const next = e.detail.requestedStepIndex;
        if (next > active && !stepValid[active]) return setShowErrors(true);
        setShowErrors(false);
        setActive(next);
      }}
      submitButtonText="Create cluster"
      i18nStrings={{
        stepNumberLabel: (n) => `Step ${n}`,
        collapsedStepsLabel: (n, total) => `Step ${n} of ${total}`,
        navigationAriaLabel: "Steps",
        cancelButton: "Cancel",
        previousButton: "Previous",
        nextButton: "Next",
        optional: "optional",
      }}
      steps={[
        {
          title: "Name and region",
          description: "The name is used for the EKS cluster, the HyperPod cluster and the S3 bucket.",
          content: <NameStep d={d} update={update} showErrors={showErrors} />,
        },
        {
          title: "Capacity",
          description: "Only the types, AZs and plans this account can use are offered.",
          content: <CapacityStep d={d} update={update} showErrors={showErrors} />,
        },
        {
          title: "Review plan",
          description: "What podplane will create (a dry run: nothing has been created yet).",
          content: (
            <PlanReview
              plan={plan}
              accepted={accepted}
              setAccepted={setAccepted}
              submitError={error}
            />
          ),
        },
      ]}
    />
  );
}
