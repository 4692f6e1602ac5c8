// A job's pods (each with its node and the node's HyperPod health verdict), the files it saved
// in the cluster's bucket, and its events.
import Box from "@cloudscape-design/components/box";
import Header from "@cloudscape-design/components/header";
import Table from "@cloudscape-design/components/table";
import { useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../../api/client";
import { ProblemAlert } from "../../components/ProblemAlert";
import { Status } from "../../components/Status";
import { Time } from "../../components/Time";
import type { Job } from "./model";

type Pod = Job["pods"][number];

function verdict(p: Pod): string {
  const v = p.node_verdict;
  if (!v) return "-";
  if (!v.present) return "node gone";
  return `${v.health ?? "no health label"}${v.fault ? ` (${v.fault})` : ""}`;
}

export function PodsTable({ pods }: { pods: Pod[] }) {
  return (
    <Table
      variant="container"
      items={pods}
      trackBy="name"
      header={<Header variant="h2" counter={`(${pods.length})`} description="Each pod's node and that node's HyperPod health.">Pods</Header>}
      columnDefinitions={[
        { id: "name", header: "Pod", isRowHeader: true, cell: (p) => p.name },
        { id: "phase", header: "Phase", cell: (p) => <Status value={p.phase.toLowerCase()} /> },
        { id: "ready", header: "Ready", cell: (p) => (p.ready ? "yes" : "no") },
        { id: "node", header: "Node", cell: (p) => p.node ?? "-" },
        { id: "health", header: "Node health", cell: verdict },
        { id: "restarts", header: "Restarts", cell: (p) => String(p.restarts) },
      ]}
      empty={<Box textAlign="center" color="inherit">No pods: not scheduled yet, or stopped.</Box>}
    />
  );
}

type SavedFile = NonNullable<Job["files"]>[number];

function size(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${unit ? value.toFixed(1) : value} ${units[unit]}`;
}

export function FilesTable({ files }: { files: Job["files"] }) {
  const items: SavedFile[] = files ?? [];
  return (
    <Table
      variant="container"
      items={items}
      trackBy="key"
      header={<Header variant="h2" counter={`(${items.length})`} description="What the job saved under its checkpoint and output prefixes, newest first.">Saved files</Header>}
      columnDefinitions={[
        { id: "key", header: "Key", isRowHeader: true, cell: (f) => f.key },
        { id: "kind", header: "Kind", cell: (f) => f.kind },
        { id: "size", header: "Size", cell: (f) => size(f.size) },
        { id: "modified", header: "Saved", cell: (f) => <Time value={f.last_modified} /> },
      ]}
      empty={<Box textAlign="center" color="inherit">{files === null ? "The bucket could not be read." : "Nothing saved yet."}</Box>}
    />
  );
}

export function EventsTable({ cluster, job, version }: { cluster: string; job: string; version: string }) {
  const query = useQuery({
    queryKey: ["job-events", cluster, job, version],
    queryFn: async () => unwrap(api.GET("/api/v1/clusters/{cluster}/jobs/{job}/events", { params: { path: { cluster, job } } })),
    placeholderData: (previous) => previous,
  });
  const items = query.data ?? [];
  return (
    <>
      {query.isError && <ProblemAlert error={query.error} header="Could not read the job's events" />}
      <Table
        variant="container"
        loading={query.isLoading}
        loadingText="Loading events"
        items={items}
        header={<Header variant="h2" counter={`(${items.length})`} description="Kubernetes events of the job and its pods.">Events</Header>}
        columnDefinitions={[
          { id: "time", header: "Time", cell: (e) => <Time value={e.time} /> },
          { id: "type", header: "Type", cell: (e) => e.type ?? "-" },
          { id: "reason", header: "Reason", cell: (e) => e.reason ?? "-" },
          { id: "object", header: "Object", cell: (e) => `${e.kind ?? ""} ${e.object ?? ""}`.trim() || "-" },
          { id: "message", header: "Message", cell: (e) => e.message ?? "-" },
        ]}
        empty={<Box textAlign="center" color="inherit">No events.</Box>}
      />
    </>
  );
}
