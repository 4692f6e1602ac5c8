// One endpoint: status and replicas, engine, image, model and parallelism, each pod with its
// node, the invoke box, its pods' last log lines, and Scale, Update and Delete (with
// confirmation); an endpoint on a warm pool points to the pool instead (its pods change there).
// Opened with ?op=<id> (after a deploy or a change) it follows that operation live.
import Button from "@cloudscape-design/components/button";
import Header from "@cloudscape-design/components/header";
import SpaceBetween from "@cloudscape-design/components/space-between";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap } from "../../api/client";
import { problemOf } from "../../api/problem";
import { NotLoaded } from "../../components/NotLoaded";
import { PodsTable } from "../../components/PodsTable";
import { deniedReason } from "../../permissions";
import { navigate, setSearch, useSearch } from "../../router";
import type { PageProps } from "../../routes";
import { usePrincipal } from "../../session";
import { OperationContainer } from "../clusters/ProgressPanel";
import { DeleteEndpointModal, ScaleEndpointModal, UpdateEndpointModal } from "./EndpointModals";
import { EndpointStatus } from "./EndpointStatus";
import { EndpointSummary, PoolNote } from "./EndpointSummary";
import { EndpointLogs } from "./EndpointLogs";
import { InvokeBox } from "./InvokeBox";
import { endpointKey, endpointsKey, endpointsPath } from "./model";

type Modal = "scale" | "update" | "delete" | null;

export default function EndpointDetail({ params }: PageProps) {
  const { cluster, endpoint: name } = params;
  const op = useSearch().get("op");
  const client = useQueryClient();
  const role = usePrincipal().role;
  const [modal, setModal] = useState<Modal>(null);
  const query = useQuery({
    queryKey: endpointKey(cluster, name),
    queryFn: async () => unwrap(api.GET("/api/v1/clusters/{cluster}/endpoints/{name}", { params: { path: { cluster, name } } })),
    refetchInterval: (q) => (q.state.data?.status === "Ready" && !op ? 15000 : 3000),
    retry: (n, err) => problemOf(err).status !== 404 && n < 2,
  });
  const e = query.data;
  const progress = op && <OperationContainer opId={op} cluster={cluster} />;
  if (!e) return <NotLoaded noun="endpoint" name={name} query={query} op={op} progress={progress} />;
  const changed = (opId: string | null) => {
    setModal(null);
    void client.invalidateQueries({ queryKey: endpointKey(cluster, name) });
    void client.invalidateQueries({ queryKey: endpointsKey(cluster) });
    if (opId) setSearch({ op: opId });
  };
  const denied = (action: "endpoint.scale" | "endpoint.update" | "endpoint.delete") => deniedReason(role, action);
  return (
    <SpaceBetween size="l">
      <Header
        variant="h1"
        description={`${e.engine} on ${cluster}`}
        info={<span data-testid="endpoint-status"><EndpointStatus value={e.status} /></span>}
        actions={
          !e.pool && <SpaceBetween direction="horizontal" size="xs">
            {(["scale", "update", "delete"] as const).map((m) => (
              <Button key={m} disabled={Boolean(denied(`endpoint.${m}`))} disabledReason={denied(`endpoint.${m}`)} onClick={() => setModal(m)}>
                {m[0].toUpperCase() + m.slice(1)}
              </Button>
            ))}
          </SpaceBetween>
        }
      >
        {e.name}
      </Header>
      {progress}
      {e.pool && <PoolNote cluster={cluster} pool={e.pool} />}
      <EndpointSummary cluster={cluster} e={e} />
      <InvokeBox cluster={cluster} name={name} denied={deniedReason(role, "endpoint.invoke")} />
      <PodsTable pods={e.pods} empty="No pods: scaled to zero, or not created yet." />
      <EndpointLogs cluster={cluster} name={name} />
      {modal === "scale" && <ScaleEndpointModal cluster={cluster} endpoint={e} onClose={() => setModal(null)} onDone={changed} />}
      {modal === "update" && <UpdateEndpointModal cluster={cluster} endpoint={e} onClose={() => setModal(null)} onDone={changed} />}
      {modal === "delete" && (
        <DeleteEndpointModal
          cluster={cluster}
          endpoint={e}
          onClose={() => setModal(null)}
          onDone={() => {
            setModal(null);
            void client.invalidateQueries({ queryKey: endpointsKey(cluster) });
            navigate(endpointsPath(cluster));
          }}
        />
      )}
    </SpaceBetween>
  );
}
