// Starting, Running, Stopping, Stopped or Failed (views.state_of on the server) as a status
// indicator.
import StatusIndicator from "@cloudscape-design/components/status-indicator";

const TYPES = { Running: "success", Starting: "in-progress", Stopping: "in-progress", Stopped: "stopped", Failed: "error" } as const;

export function SpaceState({ value }: { value: string }) {
  return <StatusIndicator type={TYPES[value as keyof typeof TYPES] ?? "info"}>{value}</StatusIndicator>;
}
