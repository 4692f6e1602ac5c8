import StatusIndicator, { type StatusIndicatorProps } from "@cloudscape-design/components/status-indicator";

// The one-word job statuses of the API (views.status_of), plus the console's own "stalled".
const KINDS: Record<string, StatusIndicatorProps.Type> = {
  Submitted: "pending",
  Pending: "pending",
  Running: "in-progress",
  Succeeded: "success",
  Failed: "error",
  Cancelled: "stopped",
  Stalled: "warning",
};

export function JobStatus({ value }: { value: string }) {
  return (
    <span style={{ whiteSpace: "nowrap" }}>
      <StatusIndicator type={KINDS[value] ?? "info"}>{value}</StatusIndicator>
    </span>
  );
}
