import StatusIndicator, { type StatusIndicatorProps } from "@cloudscape-design/components/status-indicator";

const KINDS: Record<string, StatusIndicatorProps.Type> = {
  ok: "success",
  succeeded: "success",
  active: "success",
  running: "in-progress",
  pending: "pending",
  failed: "error",
  cancelled: "stopped",
  revoked: "stopped",
  // cloud states (clusters, instance groups, nodes) as the API reports them
  healthy: "success",
  InService: "success",
  ACTIVE: "success",
  creating: "in-progress",
  Creating: "in-progress",
  Updating: "in-progress",
  deleting: "in-progress",
  Deleting: "in-progress",
  SystemUpdating: "in-progress",
  unhealthy: "error",
  Failed: "error",
  degraded: "warning",
};

/** One status word with the Cloudscape indicator that matches it; "error:<code>" shows the code. */
export function Status({ value }: { value: string }) {
  const error = value.startsWith("error:");
  return (
    <span style={{ whiteSpace: "nowrap" }}>
      <StatusIndicator type={error ? "error" : (KINDS[value] ?? "info")}>
        {error ? value.slice("error:".length) : value}
      </StatusIndicator>
    </span>
  );
}
