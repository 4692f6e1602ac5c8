// The warm pools of one cluster: engine pods that load a model once and serve whichever
// endpoint they are assigned to; model, group, Ready, free and the endpoints served; Create.
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Header from "@cloudscape-design/components/header";
import Link from "@cloudscape-design/components/link";
import Table from "@cloudscape-design/components/table";
import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../../api/client";
import { ProblemAlert } from "../../components/ProblemAlert";
import { deniedReason } from "../../permissions";
import { followHandler, navigate } from "../../router";
import type { PageProps } from "../../routes";
import { usePrincipal } from "../../session";
import { endpointPath } from "../endpoints/model";
import { poolPath, poolsKey } from "./model";

export default function PoolsList({ params }: PageProps) {
  const cluster = params.cluster;
  const denied = deniedReason(usePrincipal().role, "pool.create");
  const query = useQuery({
    queryKey: poolsKey(cluster),
    queryFn: async () => unwrap(api.GET("/api/v1/clusters/{cluster}/pools", { params: { path: { cluster } } })),
    refetchInterval: (q) => (q.state.data?.some((p) => p.ready < p.replicas) ? 3000 : 15000),
  });
  const items = query.data ?? [];
  return (
    <>
      {query.isError && <ProblemAlert error={query.error} header={`Could not list the warm pools of ${cluster}`} />}
      <Table
        variant="full-page"
        loading={query.isLoading}
        loadingText="Loading warm pools"
        items={items}
        trackBy="name"
        header={
          <Header
            variant="h1"
            counter={`(${items.length})`}
            description="Engine pods that load a model once; an endpoint gets some of them by label, with no pod to start."
            actions={
              <Button variant="primary" disabled={Boolean(denied)} disabledReason={denied} onClick={() => navigate(`/clusters/${cluster}/create-pool`)}>
                Create pool
              </Button>
            }
          >
            Warm pools
          </Header>
        }
        columnDefinitions={[
          {
            id: "name",
            header: "Name",
            isRowHeader: true,
            cell: (p) => (
              <Link href={poolPath(cluster, p.name)} onFollow={followHandler}>
                {p.name}
              </Link>
            ),
          },
          { id: "engine", header: "Engine", cell: (p) => p.engine ?? "-" },
          { id: "model", header: "Model", cell: (p) => p.model ?? "-" },
          { id: "group", header: "Instance group", cell: (p) => p.instance_group ?? "-" },
          { id: "ready", header: "Ready", cell: (p) => `${p.ready} / ${p.replicas}` },
          { id: "free", header: "Free", cell: (p) => p.free },
          {
            id: "assigned",
            header: "Serves",
            cell: (p) =>
              p.assigned.length
                ? p.assigned.map((e, i) => (
                    <span key={e}>
                      {i > 0 && ", "}
                      <Link href={endpointPath(cluster, e)} onFollow={followHandler}>{e}</Link>
                    </span>
                  ))
                : "-",
          },
        ]}
        empty={
          <Box textAlign="center" color="inherit">
            <Box variant="p">No warm pools on this cluster yet.</Box>
          </Box>
        }
      />
    </>
  );
}
