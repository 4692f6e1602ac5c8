// A workload's pods (an endpoint's, a space's): phase, whether Ready, and the node.
import Box from "@cloudscape-design/components/box";
import Header from "@cloudscape-design/components/header";
import Table from "@cloudscape-design/components/table";
import { Status } from "./Status";

interface Pod {
  name: string;
  phase: string;
  ready: boolean;
  node: string | null;
}

export function PodsTable({ pods, empty }: { pods: Pod[]; empty: string }) {
  return (
    <Table
      variant="container"
      items={pods}
      trackBy="name"
      header={<Header variant="h2" counter={`(${pods.length})`}>Pods</Header>}
      columnDefinitions={[
        { id: "name", header: "Pod", isRowHeader: true, cell: (p) => p.name },
        { id: "phase", header: "Phase", cell: (p) => <Status value={p.phase.toLowerCase()} /> },
        { id: "ready", header: "Ready", cell: (p) => (p.ready ? "yes" : "no") },
        { id: "node", header: "Node", cell: (p) => p.node ?? "-" },
      ]}
      empty={<Box textAlign="center" color="inherit">{empty}</Box>}
    />
  );
}
