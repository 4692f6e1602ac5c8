// The inference endpoints of one cluster: engine, model, parallelism, ready replicas, status,
// exposure, the warm pool of one served by a pool; Deploy, and the Models and Warm pools
// pages. Only objects podplane made are listed (its ownership labels).
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Header from "@cloudscape-design/components/header";
import Link from "@cloudscape-design/components/link";
import SpaceBetween from "@cloudscape-design/components/space-between";
import Table from "@cloudscape-design/components/table";
import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../../api/client";
import { ProblemAlert } from "../../components/ProblemAlert";
import { deniedReason } from "../../permissions";
import { followHandler, navigate } from "../../router";
import type { PageProps } from "../../routes";
import { usePrincipal } from "../../session";
import { modelsPath } from "../models/model";
import { poolPath, poolsPath } from "../pools/model";
import { EndpointStatus } from "./EndpointStatus";
import { endpointPath, endpointsKey } from "./model";

export default function EndpointsList({ params }: PageProps) {
  const cluster = params.cluster;
  const denied = deniedReason(usePrincipal().role, "endpoint.create");
  const query = useQuery({
    queryKey: endpointsKey(cluster),
    queryFn: async () => unwrap(api.GET("/api/v1/clusters/{cluster}/endpoints", { params: { path: { cluster } } })),
    refetchInterval: (q) => (q.state.data?.some((e) => e.status === "Progressing") ? 3000 : 15000),
  });
  const items = query.data ?? [];
  return (
    <>
      {query.isError && <ProblemAlert error={query.error} header={`Could not list the endpoints of ${cluster}`} />}
      <Table
        variant="full-page"
        loading={query.isLoading}
        loadingText="Loading endpoints"
        items={items}
        trackBy="name"
        header={
          <Header
            variant="h1"
            counter={`(${items.length})`}
            description={`Models served with vLLM or SGLang on ${cluster}.`}
            actions={
              <SpaceBetween direction="horizontal" size="xs">
                <Button onClick={() => navigate(modelsPath(cluster))}>Models</Button>
                <Button onClick={() => navigate(poolsPath(cluster))}>Warm pools</Button>
                <Button variant="primary" disabled={Boolean(denied)} disabledReason={denied} onClick={() => navigate(`/clusters/${cluster}/deploy-endpoint`)}>
                  Deploy model
                </Button>
              </SpaceBetween>
            }
          >
            Endpoints
          </Header>
        }
        columnDefinitions={[
          {
            id: "name",
            header: "Name",
            isRowHeader: true,
            cell: (e) => (
              <Link href={endpointPath(cluster, e.name)} onFollow={followHandler}>
                {e.name}
              </Link>
            ),
          },
          { id: "engine", header: "Engine", cell: (e) => e.engine },
          { id: "model", header: "Model", cell: (e) => e.model ?? "-" },
          { id: "gpus", header: "TP x PP", cell: (e) => `${e.tensor_parallel ?? 1} x ${e.pipeline_parallel}` },
          { id: "ready", header: "Ready", cell: (e) => `${e.ready_replicas} / ${e.replicas}` },
          { id: "status", header: "Status", cell: (e) => <EndpointStatus value={e.status} /> },
          { id: "exposure", header: "Exposure", cell: (e) => e.exposure },
          {
            id: "pool",
            header: "Warm pool",
            cell: (e) =>
              e.pool ? (
                <Link href={poolPath(cluster, e.pool)} onFollow={followHandler}>{e.pool}</Link>
              ) : (
                "-"
              ),
          },
        ]}
        empty={
          <Box textAlign="center" color="inherit">
            <Box variant="p">No endpoints on this cluster yet.</Box>
          </Box>
        }
      />
    </>
  );
}
