// The training jobs of one cluster: recipe and kind, status, pods ready, restarts spent of the
// budget, age; Submit job. Jobs submitted with `hyp` or kubectl are listed too.
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
import { useNow } from "../operations/live";
import { JobStatus } from "./JobStatus";
import { age, DONE, jobPath, jobsKey, restartsText } from "./model";

export default function JobsList({ params }: PageProps) {
  const cluster = params.cluster;
  const denied = deniedReason(usePrincipal().role, "job.submit");
  const query = useQuery({
    queryKey: jobsKey(cluster),
    queryFn: async () => unwrap(api.GET("/api/v1/clusters/{cluster}/jobs", { params: { path: { cluster } } })),
    refetchInterval: (q) => (q.state.data?.some((j) => !DONE.has(j.status)) ? 3000 : 15000),
  });
  const items = query.data ?? [];
  const now = useNow(true);
  return (
    <>
      {query.isError && <ProblemAlert error={query.error} header={`Could not list the jobs of ${cluster}`} />}
      <Table
        variant="full-page"
        loading={query.isLoading}
        loadingText="Loading jobs"
        items={items}
        trackBy="name"
        header={
          <Header
            variant="h1"
            counter={`(${items.length})`}
            description={`Training jobs on ${cluster}, whichever tool submitted them.`}
            actions={
              <Button variant="primary" disabled={Boolean(denied)} disabledReason={denied} onClick={() => navigate(`/clusters/${cluster}/submit-job`)}>
                Submit job
              </Button>
            }
          >
            Jobs
          </Header>
        }
        columnDefinitions={[
          {
            id: "name",
            header: "Name",
            isRowHeader: true,
            cell: (j) => (
              <Link href={jobPath(cluster, j.name)} onFollow={followHandler}>
                {j.name}
              </Link>
            ),
          },
          { id: "recipe", header: "Recipe or image", cell: (j) => j.recipe ?? j.image ?? "-" },
          { id: "kind", header: "Kind", cell: (j) => j.kind },
          { id: "status", header: "Status", cell: (j) => <JobStatus value={j.status} /> },
          { id: "pods", header: "Pods ready", cell: (j) => `${j.pods_ready} / ${j.pods}` },
          { id: "restarts", header: "Restarts", cell: (j) => restartsText(j.restarts) },
          { id: "age", header: "Age", cell: (j) => age(j.created_at, now) },
        ]}
        empty={
          <Box textAlign="center" color="inherit">
            <Box variant="p">No jobs on this cluster yet.</Box>
          </Box>
        }
      />
    </>
  );
}
