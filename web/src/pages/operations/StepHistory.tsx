import ExpandableSection from "@cloudscape-design/components/expandable-section";
import Table from "@cloudscape-design/components/table";
import { Status } from "../../components/Status";
import { Time } from "../../components/Time";
import type { Operation } from "./model";

interface Row {
  key: string;
  step: string;
  at: string;
  status: string;
  phase: string | null;
  attempt: number;
  message: string;
}

/** Every transition of every step, oldest first: what happened and when, for diagnosis. */
export function StepHistory({ op }: { op: Operation }) {
  const rows: Row[] = op.steps
    .flatMap((s) =>
      (s.history ?? []).map((e, i) => ({
        key: `${s.name}-${i}`,
        step: s.name,
        at: e.at,
        status: e.status,
        phase: e.phase,
        attempt: e.attempt,
        message: e.error ? `${e.error.code}: ${e.error.message}` : (e.message ?? ""),
      })),
    )
    .sort((a, b) => a.at.localeCompare(b.at));
  if (rows.length === 0) return null;
  return (
    <ExpandableSection variant="container" headerText="Step history" headerCounter={`(${rows.length})`}>
      <Table
        variant="embedded"
        items={rows}
        trackBy="key"
        wrapLines
        columnDefinitions={[
          { id: "at", header: "Time", cell: (r) => <Time value={r.at} />, width: 180 },
          { id: "step", header: "Step", cell: (r) => r.step },
          { id: "status", header: "Status", cell: (r) => <Status value={r.status} /> },
          { id: "phase", header: "Phase", cell: (r) => r.phase ?? "-" },
          { id: "attempt", header: "Attempt", cell: (r) => r.attempt },
          { id: "message", header: "Message", cell: (r) => r.message || "-" },
        ]}
      />
    </ExpandableSection>
  );
}
