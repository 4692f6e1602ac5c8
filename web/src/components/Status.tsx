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
};

/** One status word with the Cloudscape indicator that matches it; "error:<code>" shows the code. */
export function Status({ value }: { value: string }) {
  if (value.startsWith("error:")) {
    return <StatusIndicator type="error">{value.slice("error:".length)}</StatusIndicator>;
  }
  return <StatusIndicator type={KINDS[value] ?? "info"}>{value}</StatusIndicator>;
}
