// One warm pool: model, group, Ready and free pods, each pod with its state (free, assigned to
// an endpoint, draining from one, leaving) and node, the endpoints it serves with Change and
// Unassign; Scale, Assign and Delete. Opened with ?op=<id> it follows that operation live.
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Container from "@cloudscape-design/components/container";
import Header from "@cloudscape-design/components/header";
import KeyValuePairs from "@cloudscape-design/components/key-value-pairs";
import Link from "@cloudscape-design/components/link";
import SpaceBetween from "@cloudscape-design/components/space-between";
import StatusIndicator from "@cloudscape-design/components/status-indicator";
import Table from "@cloudscape-design/components/table";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap } from "../../api/client";
import { problemOf } from "../../api/problem";
import { NotLoaded } from "../../components/NotLoaded";
import { deniedReason } from "../../permissions";
import { followHandler, navigate, setSearch, useSearch } from "../../router";
import type { PageProps } from "../../routes";
import { usePrincipal } from "../../session";
import { OperationContainer } from "../clusters/ProgressPanel";
import { endpointPath, endpointsKey } from "../endpoints/model";
import { AssignModal, DeletePoolModal, ScalePoolModal } from "./PoolModals";
import { podState, poolKey, poolsKey, poolsPath, type Pool } from "./model";

type Modal = { kind: "scale" | "delete" } | { kind: "assign"; endpoint?: string; pods?: string } | null;

export default function PoolDetail({ params }: PageProps) {
  const { cluster, pool: name } = params;
  const op = useSearch().get("op");
  const client = useQueryClient();
  const role = usePrincipal().role;
  const [modal, setModal] = useState<Modal>(null);
  const query = useQuery({
    queryKey: poolKey(cluster, name),
    queryFn: async () => unwrap(api.GET("/api/v1/clusters/{cluster}/pools/{name}", { params: { path: { cluster, name } } })),
    refetchInterval: op ? 3000 : 15000,
    retry: (n, err) => problemOf(err).status !== 404 && n < 2,
  });
  const p = query.data;
  const progress = op && <OperationContainer opId={op} cluster={cluster} />;
  if (!p) return <NotLoaded noun="pool" name={name} query={query} op={op} progress={progress} />;
  const changed = (opId: string | null) => {
    const deleted = modal?.kind === "delete";
    setModal(null);
    for (const key of [poolKey(cluster, name), poolsKey(cluster), endpointsKey(cluster)]) void client.invalidateQueries({ queryKey: key });
    if (deleted) navigate(poolsPath(cluster));
    else if (opId) setSearch({ op: opId });
  };
  const button = (label: string, action: "pool.scale" | "pool.assign" | "pool.delete", open: Modal) => (
    <Button disabled={Boolean(deniedReason(role, action))} disabledReason={deniedReason(role, action)} onClick={() => setModal(open)}>
      {label}
    </Button>
  );
  return (
    <SpaceBetween size="l">
      <Header
        variant="h1"
        description={`Warm ${p.engine ?? ""} pods on ${cluster}`}
        actions={
          <SpaceBetween direction="horizontal" size="xs">
            {button("Scale", "pool.scale", { kind: "scale" })}
            {button("Assign", "pool.assign", { kind: "assign" })}
            {button("Delete", "pool.delete", { kind: "delete" })}
          </SpaceBetween>
        }
      >
        {p.name}
      </Header>
      {progress}
      <Summary p={p} />
      <Served cluster={cluster} p={p} denied={deniedReason(role, "pool.assign")} unassignDenied={deniedReason(role, "pool.unassign")} onChange={(endpoint, pods) => setModal({ kind: "assign", endpoint, pods })} />
      <Table
        variant="container"
        items={p.pods}
        trackBy="uid"
        header={<Header variant="h2" counter={`(${p.pods.length})`}>Pods</Header>}
        columnDefinitions={[
          { id: "name", header: "Pod", isRowHeader: true, cell: (pod) => pod.name },
          { id: "state", header: "State", cell: (pod) => <span data-testid="pod-state"><StatusIndicator type={podState(pod).type}>{podState(pod).text}</StatusIndicator></span> },
          { id: "ready", header: "Ready", cell: (pod) => (pod.ready ? "yes" : "no") },
          { id: "node", header: "Node", cell: (pod) => pod.node ?? "-" },
        ]}
        empty={<Box textAlign="center" color="inherit">No pods: scaled to zero, or not created yet.</Box>}
      />
      {modal?.kind === "scale" && <ScalePoolModal cluster={cluster} pool={p} onClose={() => setModal(null)} onDone={changed} />}
      {modal?.kind === "assign" && <AssignModal cluster={cluster} pool={p} endpoint={modal.endpoint} pods={modal.pods} onClose={() => setModal(null)} onDone={changed} />}
      {modal?.kind === "delete" && <DeletePoolModal cluster={cluster} pool={p} onClose={() => setModal(null)} onDone={changed} />}
    </SpaceBetween>
  );
}

function Summary({ p }: { p: Pool }) {
  return (
    <Container header={<Header variant="h2">Summary</Header>}>
      <KeyValuePairs
        columns={4}
        items={[
          { label: "Model", value: p.model ?? "-" },
          { label: "Image", value: p.image ?? "-" },
          { label: "Instance group", value: p.instance_group ?? "-" },
          { label: "Ready / pods", value: <span data-testid="pool-ready">{`${p.ready} / ${p.replicas}`}</span> },
          { label: "Free", value: <span data-testid="pool-free">{p.free}</span> },
        ]}
      />
    </Container>
  );
}

interface ServedProps {
  cluster: string;
  p: Pool;
  denied?: string;
  unassignDenied?: string;
  onChange: (endpoint: string, pods: string) => void;
}

function Served({ cluster, p, denied, unassignDenied, onChange }: ServedProps) {
  const rows = p.assigned.map((name) => ({ name, pods: p.pods.filter((pod) => pod.assigned === name && !pod.leaving) }));
  return (
    <Table
      variant="container"
      items={rows}
      trackBy="name"
      header={<Header variant="h2" counter={`(${rows.length})`} description="Invoke an endpoint on its own page.">Endpoints served</Header>}
      columnDefinitions={[
        { id: "name", header: "Endpoint", isRowHeader: true, cell: (r) => <Link href={endpointPath(cluster, r.name)} onFollow={followHandler}>{r.name}</Link> },
        { id: "pods", header: "Ready pods", cell: (r) => `${r.pods.filter((pod) => pod.ready).length} / ${r.pods.length}` },
        {
          id: "actions",
          header: "Actions",
          cell: (r) => (
            <SpaceBetween direction="horizontal" size="xs">
              <Button variant="inline-link" disabled={Boolean(denied)} disabledReason={denied} onClick={() => onChange(r.name, String(r.pods.length))}>Change pods</Button>
              <Button variant="inline-link" disabled={Boolean(unassignDenied)} disabledReason={unassignDenied} onClick={() => onChange(r.name, "0")} ariaLabel={`Unassign ${r.name}`}>Unassign</Button>
            </SpaceBetween>
          ),
        },
      ]}
      empty={<Box textAlign="center" color="inherit">No endpoint yet: Assign gives one some of the free pods.</Box>}
    />
  );
}
