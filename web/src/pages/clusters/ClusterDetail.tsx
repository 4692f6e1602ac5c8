// One cluster: its state and facts, the progress of its operation while it is being created
// (or failed), its instance groups and its nodes.
import Alert from "@cloudscape-design/components/alert";
import Button from "@cloudscape-design/components/button";
import Container from "@cloudscape-design/components/container";
import Header from "@cloudscape-design/components/header";
import KeyValuePairs from "@cloudscape-design/components/key-value-pairs";
import SpaceBetween from "@cloudscape-design/components/space-between";
import StatusIndicator from "@cloudscape-design/components/status-indicator";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap } from "../../api/client";
import { ProblemAlert } from "../../components/ProblemAlert";
import { Status } from "../../components/Status";
import { deniedReason } from "../../permissions";
import type { PageProps } from "../../routes";
import { usePrincipal } from "../../session";
import { DeleteClusterModal } from "./DeleteClusterModal";
import { DependenciesTable } from "./DependenciesTable";
import { FeaturesPanel } from "./FeaturesPanel";
import { GroupsTable } from "./GroupsTable";
import { EndpointsLink } from "../endpoints/EndpointsLink";
import { JobsLink } from "../jobs/JobsLink";
import { SpacesLink } from "../spaces/SpacesLink";
import { clusterKey, specOf } from "./model";
import { NodesTable } from "./NodesTable";
import { ProgressPanel } from "./ProgressPanel";
import { RecentOps, useRecentOps } from "./RecentOps";

export default function ClusterDetail({ params }: PageProps) {
  const name = params.cluster;
  const query = useQuery({
    queryKey: clusterKey(name),
    queryFn: async () =>
      unwrap(api.GET("/api/v1/clusters/{cluster}", { params: { path: { cluster: name } } })),
  });
  const [followed, setFollowed] = useState(false);
  const recent = useRecentOps(name);
  const [deleting, setDeleting] = useState(false);
  const deleteDenied = deniedReason(usePrincipal().role, "cluster.delete");
  const c = query.data;
  if (!c) {
    if (query.isError) return <ProblemAlert error={query.error} header={`Could not read cluster ${name}`} />;
    return <StatusIndicator type="loading">Loading cluster {name}</StatusIndicator>;
  }
  const op = c.operation;
  const opUnfinished = op && op.status !== "succeeded";
  if (opUnfinished && !followed) setFollowed(true);
  const ready = Boolean(c.hyperpod);
  // A cluster on its way out has no features to switch (its Kubernetes API goes away too).
  const switchable = ready && c.state !== "deleting";
  return (
    <SpaceBetween size="l">
      <Header
        variant="h1"
        description={`${c.origin} cluster in ${c.region}`}
        info={<Status value={c.state} />}
        actions={
          <Button disabled={Boolean(deleteDenied)} disabledReason={deleteDenied} onClick={() => setDeleting(true)}>
            Delete cluster
          </Button>
        }
      >
        {c.name}
      </Header>
      {c.hyperpod?.failure_message && (
        <Alert type="error" header="HyperPod reports a failure">{c.hyperpod.failure_message}</Alert>
      )}
      {op && (opUnfinished || followed) && (
        <Container header={<Header variant="h2" description="Each step with its status, phase and elapsed time.">Progress</Header>}>
          <div data-testid="progress">
            <ProgressPanel opId={op.id} cluster={name} />
          </div>
        </Container>
      )}
      <Container header={<Header variant="h2">Summary</Header>}>
        <KeyValuePairs
          columns={4}
          items={[
            { label: "State", value: <span data-testid="cluster-state"><Status value={c.state} /></span> },
            { label: "EKS", value: c.eks ? `${c.eks.status ?? "-"} (Kubernetes ${c.eks.version ?? "-"})` : "-" },
            { label: "HyperPod", value: c.hyperpod?.status ?? "-" },
            { label: "Node recovery", value: c.hyperpod?.node_recovery ?? "-" },
            { label: "Availability zone", value: specOf(c)?.availability_zone ?? "-" },
            { label: "Compute subnet", value: c.facts?.network?.compute_subnet ?? "-" },
            { label: "VPC", value: c.facts?.network?.vpc_id ?? "-" },
            { label: "Bucket", value: c.facts?.bucket ?? "-" },
            { label: "Training", value: ready ? <JobsLink cluster={c.name} /> : "-" },
            { label: "Inference", value: ready ? <EndpointsLink cluster={c.name} /> : "-" },
            { label: "Development", value: ready ? <SpacesLink cluster={c.name} /> : "-" },
          ]}
        />
      </Container>
      <RecentOps ops={recent} />
      {ready && <GroupsTable cluster={c} onStarted={recent.add} />}
      {ready && <NodesTable cluster={name} onStarted={recent.add} />}
      {ready && c.dependencies && <DependenciesTable deps={c.dependencies} cluster={c} onStarted={recent.add} />}
      {switchable && <FeaturesPanel cluster={name} />}
      {deleting && <DeleteClusterModal cluster={c} onClose={() => setDeleting(false)} />}
      {!ready && <Alert type="info">Instance groups and nodes appear once the HyperPod cluster exists.</Alert>}
    </SpaceBetween>
  );
}
