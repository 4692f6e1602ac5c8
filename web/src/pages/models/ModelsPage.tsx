// The models in the cluster's bucket (read from S3: files, size, complete when config.json and
// a weights file are there) and the download form; a started download's operation is followed
// live above the list (?op=<id>), and the list is read again as it progresses.
import Box from "@cloudscape-design/components/box";
import Container from "@cloudscape-design/components/container";
import Header from "@cloudscape-design/components/header";
import SpaceBetween from "@cloudscape-design/components/space-between";
import StatusIndicator from "@cloudscape-design/components/status-indicator";
import Table from "@cloudscape-design/components/table";
import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../../api/client";
import { ProblemAlert } from "../../components/ProblemAlert";
import { deniedReason } from "../../permissions";
import { setSearch, useSearch } from "../../router";
import type { PageProps } from "../../routes";
import { usePrincipal } from "../../session";
import { ProgressPanel } from "../clusters/ProgressPanel";
import { DownloadForm } from "./DownloadForm";
import { modelsKey, sizeText } from "./model";

export default function ModelsPage({ params }: PageProps) {
  const cluster = params.cluster;
  const op = useSearch().get("op");
  const denied = deniedReason(usePrincipal().role, "model.download");
  const query = useQuery({
    queryKey: modelsKey(cluster),
    queryFn: async () => unwrap(api.GET("/api/v1/clusters/{cluster}/models", { params: { path: { cluster } } })),
    refetchInterval: op ? 3000 : 30000,
  });
  const items = query.data ?? [];
  return (
    <SpaceBetween size="l">
      <Header variant="h1" description={`Model weights in ${cluster}'s bucket, under models/: what endpoints and pools load.`}>
        Models
      </Header>
      <DownloadForm cluster={cluster} denied={denied} onStarted={(id) => setSearch({ op: id ?? undefined })} />
      {op && (
        <Container header={<Header variant="h2">Download</Header>}>
          <div data-testid="progress">
            <ProgressPanel opId={op} cluster={cluster} />
          </div>
        </Container>
      )}
      {query.isError && <ProblemAlert error={query.error} header={`Could not list the models of ${cluster}`} />}
      <Table
        variant="container"
        loading={query.isLoading}
        loadingText="Reading the bucket"
        items={items}
        trackBy="name"
        header={<Header variant="h2" counter={`(${items.length})`}>In the bucket</Header>}
        columnDefinitions={[
          { id: "name", header: "Name", isRowHeader: true, cell: (m) => m.name },
          { id: "uri", header: "Model (for an endpoint)", cell: (m) => m.uri },
          { id: "files", header: "Files", cell: (m) => m.files },
          { id: "size", header: "Size", cell: (m) => sizeText(m.bytes) },
          { id: "complete", header: "Complete", cell: (m) => <StatusIndicator type={m.complete ? "success" : "warning"}>{m.complete ? "yes" : "no weights or config yet"}</StatusIndicator> },
        ]}
        empty={<Box textAlign="center" color="inherit">No models in the bucket yet.</Box>}
      />
    </SpaceBetween>
  );
}
