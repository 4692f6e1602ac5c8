// The last lines of every pod serving an endpoint (engine pods and router pods), read on
// demand from GET …/endpoints/{name}/logs.
import { api, unwrap } from "../../api/client";
import { LogsPanel, TAIL } from "../../components/LogsPanel";

export function EndpointLogs({ cluster, name }: { cluster: string; name: string }) {
  return (
    <LogsPanel
      queryKey={["endpoint-logs", cluster, name]}
      load={async () =>
        unwrap(api.GET("/api/v1/clusters/{cluster}/endpoints/{name}/logs", { params: { path: { cluster, name }, query: { tail: TAIL, limit: 1000 } } }))}
      description={`The last ${TAIL} lines of each engine and router pod.`}
      testId="endpoint"
    />
  );
}
