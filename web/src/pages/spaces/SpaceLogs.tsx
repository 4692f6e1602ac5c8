// The last lines of a space's server pod, read on demand from GET …/spaces/{name}/logs.
import { api, unwrap } from "../../api/client";
import { LogsPanel, TAIL } from "../../components/LogsPanel";

export function SpaceLogs({ cluster, name }: { cluster: string; name: string }) {
  return (
    <LogsPanel
      queryKey={["space-logs", cluster, name]}
      load={async () =>
        unwrap(api.GET("/api/v1/clusters/{cluster}/spaces/{name}/logs", { params: { path: { cluster, name }, query: { tail: TAIL, limit: 1000 } } }))}
      description={`The last ${TAIL} lines of the space's server.`}
      testId="space"
    />
  );
}
