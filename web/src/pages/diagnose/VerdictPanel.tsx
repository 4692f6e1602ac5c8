// A verdict as a person reads it: the conclusion and since when, notes, each finding with its
// fix and the evidence it rests on (each item with its source), the node ladder with each
// rung's cost, and the suggested next step (NextStep), which the diagnosis never makes itself.
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Container from "@cloudscape-design/components/container";
import Header from "@cloudscape-design/components/header";
import KeyValuePairs from "@cloudscape-design/components/key-value-pairs";
import SpaceBetween from "@cloudscape-design/components/space-between";
import StatusIndicator, { type StatusIndicatorProps } from "@cloudscape-design/components/status-indicator";
import Table from "@cloudscape-design/components/table";
import { Time } from "../../components/Time";
import { callText } from "./actions";
import type { SuggestedCall, Verdict, VerdictFinding } from "./model";
import { NextStep, type NextStepProps } from "./NextStep";

const LOOK: Record<Verdict["status"], StatusIndicatorProps.Type> = { ok: "success", warn: "warning", fail: "error" };

export function VerdictStatus({ value }: { value: Verdict["status"] }) {
  return <StatusIndicator type={LOOK[value]}>{value}</StatusIndicator>;
}

interface Props extends Pick<NextStepProps, "onAct" | "started"> {
  verdict: Verdict;
}

export function VerdictPanel({ verdict, onAct, started }: Props) {
  return (
    <SpaceBetween size="l">
      <Box variant="h3" data-testid="verdict-conclusion">{verdict.conclusion}</Box>
      <KeyValuePairs
        columns={3}
        items={[
          { label: "Status", value: <span data-testid="verdict-status"><VerdictStatus value={verdict.status} /></span> },
          { label: "Since", value: verdict.since ? <Time value={verdict.since} /> : "-" },
          { label: "Target", value: verdict.target },
        ]}
      />
      {verdict.notes.map((note) => (
        <Alert key={note} type="info">{note}</Alert>
      ))}
      {verdict.findings.length === 0 ? (
        <Box data-testid="verdict-no-findings" color="text-status-success">No findings.</Box>
      ) : (
        verdict.findings.map((f, i) => <FindingView key={`${f.check}-${i}`} finding={f} />)
      )}
      {verdict.ladder.length > 0 && <Ladder ladder={verdict.ladder} next={verdict.next} />}
      {verdict.next && <NextStep call={verdict.next} onAct={onAct} started={started} />}
    </SpaceBetween>
  );
}

function FindingView({ finding }: { finding: VerdictFinding }) {
  return (
    <Container
      data-testid={`finding-${finding.check}`}
      header={
        <Header variant="h3" description={finding.detail} info={<VerdictStatus value={finding.status} />}>
          {finding.check}
        </Header>
      }
    >
      <SpaceBetween size="s">
        {finding.fix && <Box variant="p"><b>Fix:</b> {finding.fix}</Box>}
        <Table
          variant="embedded"
          items={finding.evidence}
          wrapLines
          ariaLabels={{ tableLabel: `Evidence for ${finding.check}` }}
          columnDefinitions={[
            { id: "source", header: "Source", cell: (e) => <Box variant="code">{e.source}</Box>, width: 240 },
            { id: "detail", header: "Evidence", cell: (e) => e.detail },
          ]}
          empty={<Box>No evidence recorded.</Box>}
        />
      </SpaceBetween>
    </Container>
  );
}

function same(a: SuggestedCall, b: SuggestedCall | null | undefined): boolean {
  return Boolean(b) && callText(a) === callText(b as SuggestedCall);
}

function Ladder({ ladder, next }: { ladder: SuggestedCall[]; next: Verdict["next"] }) {
  return (
    <Table
      variant="container"
      header={<Header variant="h3" description="Escalate one rung at a time: each costs more than the one before.">Ladder</Header>}
      items={ladder}
      wrapLines
      ariaLabels={{ tableLabel: "Escalation ladder" }}
      columnDefinitions={[
        {
          id: "rung",
          header: "Rung",
          cell: (c) => (
            <>
              {["Investigate", "Reboot", "Replace"][ladder.indexOf(c)] ?? c.tool}
              {same(c, next) && <Box variant="small" display="block" color="text-status-info">suggested</Box>}
            </>
          ),
        },
        { id: "call", header: "Call", cell: (c) => <Box variant="code">{callText(c)}</Box> },
        { id: "cost", header: "Cost", cell: (c) => c.cost },
      ]}
    />
  );
}
