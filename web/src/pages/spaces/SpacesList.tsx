// The dev spaces of one cluster: state, resources, instance group, who made it; New space.
// Spaces made with hyp or kubectl are listed too (made by "other").
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
import { MOVING, newSpacePath, resourcesText, spacePath, spacesKey, templatesPath } from "./model";
import { SpaceState } from "./SpaceState";

export default function SpacesList({ params }: PageProps) {
  const cluster = params.cluster;
  const denied = deniedReason(usePrincipal().role, "space.create");
  const query = useQuery({
    queryKey: spacesKey(cluster),
    queryFn: async () => unwrap(api.GET("/api/v1/clusters/{cluster}/spaces", { params: { path: { cluster } } })),
    refetchInterval: (q) => (q.state.data?.some((s) => MOVING.has(s.state)) ? 3000 : 15000),
  });
  const items = query.data ?? [];
  return (
    <>
      {query.isError && <ProblemAlert error={query.error} header={`Could not list the spaces of ${cluster}`} />}
      <Table
        variant="full-page"
        loading={query.isLoading}
        loadingText="Loading spaces"
        items={items}
        trackBy="name"
        header={
          <Header
            variant="h1"
            counter={`(${items.length})`}
            description={`JupyterLab on ${cluster}, with a home volume and the cluster bucket at /data, /models and /outputs.`}
            actions={
              <SpaceBetween direction="horizontal" size="xs">
                <Button onClick={() => navigate(templatesPath(cluster))}>Templates</Button>
                <Button variant="primary" disabled={Boolean(denied)} disabledReason={denied} onClick={() => navigate(newSpacePath(cluster))}>
                  New space
                </Button>
              </SpaceBetween>
            }
          >
            Spaces
          </Header>
        }
        columnDefinitions={[
          {
            id: "name",
            header: "Name",
            isRowHeader: true,
            cell: (s) => (
              <Link href={spacePath(cluster, s.name)} onFollow={followHandler}>
                {s.name}
              </Link>
            ),
          },
          { id: "state", header: "State", cell: (s) => <SpaceState value={s.state} /> },
          { id: "resources", header: "Resources", cell: (s) => resourcesText(s) },
          { id: "group", header: "Instance group", cell: (s) => s.instance_group ?? "any" },
          { id: "home", header: "Home", cell: (s) => s.storage ?? "-" },
          { id: "template", header: "Template", cell: (s) => s.template ?? "-" },
          { id: "made", header: "Made by", cell: (s) => (s.made_by === "podplane" ? (s.created_by ?? "podplane") : "other (hyp, kubectl)") },
        ]}
        empty={
          <Box textAlign="center" color="inherit">
            <Box variant="p">No spaces on this cluster yet.</Box>
          </Box>
        }
      />
    </>
  );
}
