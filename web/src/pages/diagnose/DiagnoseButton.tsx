// "Diagnose" on a node, an operation or a job: a read-only call any role may make; its verdict
// opens in a dialog (VerdictPanel). Its suggested step, once the person asks for it, replaces
// that dialog with a confirmation (one dialog at a time), and the verdict comes back with the
// started operation followed.
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Modal from "@cloudscape-design/components/modal";
import SpaceBetween from "@cloudscape-design/components/space-between";
import StatusIndicator from "@cloudscape-design/components/status-indicator";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { ProblemAlert } from "../../components/ProblemAlert";
import type { Performable } from "./actions";
import { ConfirmStep } from "./ConfirmStep";
import { diagnosisKey, fetchVerdict, subjectName, type SuggestedCall, type Subject } from "./model";
import { VerdictPanel } from "./VerdictPanel";

interface Props {
  subject: Subject | null;
  /** Why there is nothing to diagnose yet (e.g. "Select a node."). */
  disabledReason?: string;
  onStarted?: (opId: string, label: string) => void;
}

export function DiagnoseButton({ subject, disabledReason, onStarted }: Props) {
  const [open, setOpen] = useState<Subject | null>(null);
  return (
    <>
      <Button disabled={!subject} disabledReason={disabledReason} onClick={() => setOpen(subject)}>
        Diagnose
      </Button>
      {open && <Diagnosis key={JSON.stringify(open)} subject={open} onClose={() => setOpen(null)} onStarted={onStarted} />}
    </>
  );
}

interface Asked {
  action: Performable;
  call: SuggestedCall;
}

function Diagnosis({ subject, onClose, onStarted }: { subject: Subject; onClose: () => void; onStarted?: Props["onStarted"] }) {
  const query = useQuery({ queryKey: diagnosisKey(subject), queryFn: () => fetchVerdict(subject), staleTime: 0 });
  const [asked, setAsked] = useState<Asked | null>(null);
  const [started, setStarted] = useState<string | null>(null);
  if (asked) {
    return (
      <ConfirmStep
        action={asked.action}
        call={asked.call}
        onClose={() => setAsked(null)}
        onDone={(id, label) => {
          setAsked(null);
          if (id) {
            setStarted(id);
            onStarted?.(id, label);
          }
        }}
      />
    );
  }
  return (
    <Modal
      visible
      size="large"
      onDismiss={onClose}
      header={`Diagnosis of ${subjectName(subject)}`}
      footer={
        <Box float="right">
          <SpaceBetween direction="horizontal" size="xs">
            <Button loading={query.isFetching} onClick={() => void query.refetch()}>Diagnose again</Button>
            <Button variant="link" onClick={onClose}>Close</Button>
          </SpaceBetween>
        </Box>
      }
    >
      {query.isError && <ProblemAlert error={query.error} header="Could not diagnose" />}
      {query.isLoading && <StatusIndicator type="loading">Reading HyperPod, Kubernetes and the operations</StatusIndicator>}
      {query.data && (
        <VerdictPanel verdict={query.data} started={started} onAct={(action, call) => setAsked({ action, call })} />
      )}
    </Modal>
  );
}
