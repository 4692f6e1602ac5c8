// The last lines of every pod serving an endpoint (engine pods and router pods), read on
// demand from GET …/endpoints/{name}/logs: an endpoint runs for days, so the page shows a tail
// and a Refresh, not a live stream.
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Container from "@cloudscape-design/components/container";
import Header from "@cloudscape-design/components/header";
import SpaceBetween from "@cloudscape-design/components/space-between";
import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../../api/client";
import { problemOf } from "../../api/problem";

export const TAIL = 100;

export function EndpointLogs({ cluster, name }: { cluster: string; name: string }) {
  const query = useQuery({
    queryKey: ["endpoint-logs", cluster, name],
    queryFn: async () =>
      unwrap(api.GET("/api/v1/clusters/{cluster}/endpoints/{name}/logs", { params: { path: { cluster, name }, query: { tail: TAIL, limit: 1000 } } })),
    refetchOnWindowFocus: false,
  });
  const page = query.data;
  return (
    <Container
      header={
        <Header
          variant="h2"
          description={`The last ${TAIL} lines of each engine and router pod.`}
          actions={
            <Button iconName="refresh" loading={query.isFetching} onClick={() => void query.refetch()}>
              Refresh
            </Button>
          }
        >
          Logs
        </Header>
      }
    >
      <SpaceBetween size="s">
        {query.error && <Box color="text-status-error">{problemOf(query.error).detail}</Box>}
        {Object.entries(page?.notes ?? {}).map(([pod, why]) => (
          <Box key={pod} variant="small" color="text-status-inactive">
            {pod}: {why}
          </Box>
        ))}
        <div
          data-testid="endpoint-logs"
          style={{ maxHeight: 420, overflow: "auto", fontFamily: "monospace", fontSize: 12, whiteSpace: "pre-wrap", wordBreak: "break-all" }}
        >
          {(page?.lines ?? []).map((l, i) => (
            <div key={i} data-testid="endpoint-log-line">
              <span style={{ color: "#5f6b7a" }}>{l.pod} </span>
              {l.line}
            </div>
          ))}
        </div>
        {page && page.lines.length === 0 && <Box color="text-body-secondary">No lines yet.</Box>}
      </SpaceBetween>
    </Container>
  );
}
