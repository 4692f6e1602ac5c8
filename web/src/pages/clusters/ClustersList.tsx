// Clusters: the managed ones with their state, region and instance groups; Create cluster.
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Header from "@cloudscape-design/components/header";
import Link from "@cloudscape-design/components/link";
import Table from "@cloudscape-design/components/table";
import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../../api/client";
import { ProblemAlert } from "../../components/ProblemAlert";
import { Status } from "../../components/Status";
import { deniedReason } from "../../permissions";
import { followHandler, navigate } from "../../router";
import { usePrincipal } from "../../session";
import { clusterKey, type ManagedCluster } from "./model";

const SETTLED = new Set(["active", "failed", "deleted"]);

export default function ClustersList() {
  const who = usePrincipal();
  const denied = deniedReason(who.role, "cluster.create");
  const query = useQuery({
    queryKey: ["clusters"],
    queryFn: async () => unwrap(api.GET("/api/v1/clusters")),
    refetchInterval: (q) => (q.state.data?.managed.some((c) => !SETTLED.has(c.state)) ? 3000 : false),
  });
  const items = query.data?.managed ?? [];
  return (
    <>
      {query.isError && <ProblemAlert error={query.error} header="Could not list clusters" />}
      <Table
        variant="full-page"
        loading={query.isLoading}
        loadingText="Loading clusters"
        items={items}
        trackBy="name"
        header={
          <Header
            variant="h1"
            counter={`(${items.length})`}
            description="EKS clusters with a SageMaker HyperPod cluster that podplane manages."
            actions={
              <Button variant="primary" disabled={Boolean(denied)} disabledReason={denied} onClick={() => navigate("/create-cluster")}>
                Create cluster
              </Button>
            }
          >
            Clusters
          </Header>
        }
        columnDefinitions={[
          {
            id: "name",
            header: "Name",
            isRowHeader: true,
            cell: (c) => (
              <Link href={`/clusters/${c.name}`} onFollow={followHandler}>
                {c.name}
              </Link>
            ),
          },
          { id: "state", header: "State", cell: (c) => <Status value={c.state} /> },
          { id: "region", header: "Region", cell: (c) => c.region },
          { id: "groups", header: "Instance groups", cell: (c) => <GroupsSummary cluster={c} /> },
          { id: "origin", header: "Origin", cell: (c) => c.origin },
          {
            id: "operation",
            header: "Operation",
            cell: (c) =>
              c.operation_id ? (
                <Link href={`/operations/${c.operation_id}`} onFollow={followHandler}>
                  {c.operation_id}
                </Link>
              ) : (
                "-"
              ),
          },
        ]}
        empty={
          <Box textAlign="center" color="inherit">
            <Box variant="p">No clusters yet.</Box>
          </Box>
        }
      />
    </>
  );
}

/** "accelerated-1: 2/2 ml.g5.8xlarge" per group, read from the cluster's status. */
function GroupsSummary({ cluster }: { cluster: ManagedCluster }) {
  const query = useQuery({
    queryKey: clusterKey(cluster.name),
    queryFn: async () =>
      unwrap(api.GET("/api/v1/clusters/{cluster}", { params: { path: { cluster: cluster.name } } })),
  });
  const groups = query.data?.hyperpod?.instance_groups;
  if (query.isLoading) return <>…</>;
  if (!groups?.length) return <>-</>;
  return (
    <>
      {groups.map((g) => (
        <Box key={g.name} variant="small" display="block">
          {g.name}: {g.current}/{g.target} × {g.instance_type}
        </Box>
      ))}
    </>
  );
}
