// The last lines of a workload's pods, read on demand from one of the paged …/logs routes
// (endpoints, spaces): such a workload runs for days, so the page shows a tail and a Refresh,
// not a live stream.
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Container from "@cloudscape-design/components/container";
import Header from "@cloudscape-design/components/header";
import SpaceBetween from "@cloudscape-design/components/space-between";
import { useQuery } from "@tanstack/react-query";
import type { Schemas } from "../api/client";
import { problemOf } from "../api/problem";

export const TAIL = 100;

/** What every paged log route answers, whatever else it names (`endpoint`, `space`). */
type LogPage = { lines: Schemas["LogLineOut"][]; notes: Record<string, string> };

interface Props {
  queryKey: readonly string[];
  /** One page of the last TAIL lines of each pod. */
  load: () => Promise<LogPage>;
  description: string;
  /** data-testid prefix: `<testId>-logs` around the lines, `<testId>-log-line` on each. */
  testId: string;
}

export function LogsPanel({ queryKey, load, description, testId }: Props) {
  const query = useQuery({ queryKey, queryFn: load, refetchOnWindowFocus: false });
  const page = query.data;
  return (
    <Container
      header={
        <Header
          variant="h2"
          description={description}
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
          data-testid={`${testId}-logs`}
          style={{ maxHeight: 420, overflow: "auto", fontFamily: "monospace", fontSize: 12, whiteSpace: "pre-wrap", wordBreak: "break-all" }}
        >
          {(page?.lines ?? []).map((l, i) => (
            <div key={i} data-testid={`${testId}-log-line`}>
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
