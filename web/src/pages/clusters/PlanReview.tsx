// The dry-run plan of a new cluster: what will be created, and the pre-flight findings with
// their hints. Blocking findings stop the submit; warnings can be accepted explicitly.
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Checkbox from "@cloudscape-design/components/checkbox";
import Container from "@cloudscape-design/components/container";
import Header from "@cloudscape-design/components/header";
import KeyValuePairs from "@cloudscape-design/components/key-value-pairs";
import SpaceBetween from "@cloudscape-design/components/space-between";
import StatusIndicator from "@cloudscape-design/components/status-indicator";
import type { UseQueryResult } from "@tanstack/react-query";
import { ProblemAlert } from "../../components/ProblemAlert";
import type { ClusterPlan, PreflightFinding } from "./model";

interface Props {
  plan: UseQueryResult<ClusterPlan>;
  accepted: string[];
  setAccepted: (codes: string[]) => void;
  submitError: unknown;
}

export function PlanReview({ plan, accepted, setAccepted, submitError }: Props) {
  if (plan.isError) return <ProblemAlert error={plan.error} header="The plan could not be made" />;
  if (!plan.data) return <StatusIndicator type="loading">Planning (dry run)</StatusIndicator>;
  const p = plan.data;
  const findings = p.preflight ?? [];
  const warnings = findings.filter((f) => f.severity !== "blocking");
  const group = p.instance_group;
  return (
    <SpaceBetween size="l">
      {p.blocked && (
        <Alert type="error" header="Pre-flight checks block this cluster">
          Go back and change the decisions below; nothing was created.
        </Alert>
      )}
      {p.exists && <Alert type="info">A cluster named {p.cluster} exists already: submitting changes nothing.</Alert>}
      {findings.length > 0 && <Findings findings={findings} />}
      {warnings.length > 0 && (
        <Checkbox
          checked={warnings.every((w) => accepted.includes(w.code))}
          onChange={(e) => setAccepted(e.detail.checked ? warnings.map((w) => w.code) : [])}
        >
          I accept these warnings ({warnings.map((w) => w.code).join(", ")})
        </Checkbox>
      )}
      <Container header={<Header variant="h2" description="Derived by the control plane from your decisions.">Plan</Header>}>
        <KeyValuePairs
          columns={3}
          items={[
            { label: "Cluster", value: `${p.cluster} (${p.region})` },
            { label: "Kubernetes", value: p.kubernetes_version ?? "-" },
            { label: "Node recovery", value: p.node_recovery ?? "-" },
            { label: "Instance group", value: group ? `${group.name}: ${group.count} × ${group.instance_type} (${group.capacity_type})` : "-" },
            { label: "Deep health checks", value: group?.deep_health_checks?.join(", ") || "off" },
            { label: "EBS per instance", value: group?.ebs_gb ? `${group.ebs_gb} GiB` : "-" },
            { label: "VPC", value: p.network?.vpc_cidr ?? "-" },
            { label: "Compute subnet (/20)", value: p.network?.compute ? `${p.network.compute[1]} in ${p.network.compute[0]}` : "-" },
            { label: "Storage", value: p.storage?.bucket ? `s3://${p.storage.bucket}` : "-" },
          ]}
        />
      </Container>
      <Container header={<Header variant="h2" counter={`(${p.steps.length})`}>Steps of the operation</Header>}>
        <Box variant="p">{p.steps.map((s, i) => `${i + 1}. ${s}`).join("  →  ")}</Box>
        {p.dependencies && (
          <Box variant="small" display="block">
            Dependencies: {p.dependencies.map((x) => x.name).join(", ")}
          </Box>
        )}
        {p.notes?.map((n) => (
          <Box key={n} variant="small" display="block">{n}</Box>
        ))}
      </Container>
      {submitError !== null && <ProblemAlert error={submitError} header="The cluster was not created" />}
    </SpaceBetween>
  );
}

function Findings({ findings }: { findings: PreflightFinding[] }) {
  return (
    <SpaceBetween size="xs">
      {findings.map((f) => (
        <Alert key={f.code} type={f.severity === "blocking" ? "error" : "warning"} header={`${f.code}: ${f.message}`}>
          {f.hint && <>Hint: {f.hint}</>}
        </Alert>
      ))}
    </SpaceBetween>
  );
}
