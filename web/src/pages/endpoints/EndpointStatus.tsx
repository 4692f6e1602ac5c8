// Ready, Progressing or Stopped (services: views.summary) as a status indicator.
import StatusIndicator from "@cloudscape-design/components/status-indicator";

const TYPES = { Ready: "success", Progressing: "in-progress", Stopped: "stopped" } as const;

export function EndpointStatus({ value }: { value: string }) {
  return <StatusIndicator type={TYPES[value as keyof typeof TYPES] ?? "info"}>{value}</StatusIndicator>;
}
