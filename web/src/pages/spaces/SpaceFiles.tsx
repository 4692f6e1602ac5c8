// A directory as the space's server sees it (GET …/spaces/{name}/files?path=…): a path box
// ("data" is the cluster bucket's data/ prefix, where jobs write), Refresh, and its entries; a
// directory's name opens it. Read through the server, so only a Running space answers.
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import FormField from "@cloudscape-design/components/form-field";
import Header from "@cloudscape-design/components/header";
import Input from "@cloudscape-design/components/input";
import Link from "@cloudscape-design/components/link";
import SpaceBetween from "@cloudscape-design/components/space-between";
import Table from "@cloudscape-design/components/table";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap } from "../../api/client";
import { ProblemAlert } from "../../components/ProblemAlert";
import { Time } from "../../components/Time";

export const START = "data";

interface Props {
  cluster: string;
  name: string;
  running: boolean;
  /** Why this role may not read them, if it may not. */
  denied?: string;
}

export function SpaceFiles({ cluster, name, running, denied }: Props) {
  const [typed, setTyped] = useState(START);
  const [path, setPath] = useState(START);
  const query = useQuery({
    queryKey: ["space-files", cluster, name, path],
    queryFn: async () => unwrap(api.GET("/api/v1/clusters/{cluster}/spaces/{name}/files", { params: { path: { cluster, name }, query: { path } } })),
    enabled: running && !denied,
    refetchOnWindowFocus: false,
  });
  const open = (to: string) => {
    const clean = to.replace(/^\/+|\/+$/g, "");
    setTyped(clean);
    if (clean === path) void query.refetch();
    else setPath(clean);
  };
  const listing = query.data;
  return (
    <div data-testid="space-files">
      <Table
        variant="container"
        loading={query.isFetching && !listing}
        loadingText="Reading the directory"
        items={listing?.entries ?? []}
        trackBy="path"
        header={
          <Header
            variant="h2"
            counter={listing ? `(${listing.entries.length}${listing.truncated ? "+" : ""})` : undefined}
            description="A directory as the space's server sees it: data, models and outputs are the cluster bucket's prefixes."
            actions={
              <Button iconName="refresh" loading={query.isFetching} disabled={!running || Boolean(denied)} disabledReason={denied} onClick={() => open(typed)}>
                Refresh
              </Button>
            }
          >
            Files
          </Header>
        }
        filter={
          <SpaceBetween size="xs">
            <FormField label="Path" stretch>
              <Input ariaLabel="Path" value={typed} disabled={Boolean(denied)} onChange={(e) => setTyped(e.detail.value)} onKeyDown={(e) => e.detail.key === "Enter" && open(typed)} />
            </FormField>
            {query.isError && <ProblemAlert error={query.error} header={`Could not read /${path}`} />}
            {!running && <Box color="text-body-secondary">Its files are read through its server: start the space to see them.</Box>}
          </SpaceBetween>
        }
        columnDefinitions={[
          {
            id: "name",
            header: "Name",
            isRowHeader: true,
            cell: (f) => (f.type === "directory" ? <Link onFollow={() => open(f.path)}>{f.name}/</Link> : f.name),
          },
          { id: "type", header: "Type", cell: (f) => f.type },
          { id: "size", header: "Size", cell: (f) => (f.size === null ? "-" : `${f.size} B`) },
          { id: "modified", header: "Last modified", cell: (f) => <Time value={f.last_modified} /> },
        ]}
        empty={<Box textAlign="center" color="inherit">{listing ? "Empty directory." : "Nothing read yet."}</Box>}
      />
    </div>
  );
}
