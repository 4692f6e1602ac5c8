// Scale (only the changed count is sent) and delete (names what is lost) an instance group.
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Checkbox from "@cloudscape-design/components/checkbox";
import FormField from "@cloudscape-design/components/form-field";
import Input from "@cloudscape-design/components/input";
import Modal from "@cloudscape-design/components/modal";
import SpaceBetween from "@cloudscape-design/components/space-between";
import { useMemo, useState, type ReactNode } from "react";
import { api, type Schemas } from "../../api/client";
import { ProblemAlert } from "../../components/ProblemAlert";
import { useFlash } from "../../layout/flash";
import { deniedReason } from "../../permissions";
import { usePrincipal } from "../../session";
import type { Group } from "./model";
import { newKey, startChange } from "./mutation";

interface Props {
  cluster: string;
  group: Group;
  onClose: () => void;
  onDone: (opId: string | null, label: string) => void;
}

/** The scale body: only the fields the user changed (the diff contract). */
export function scaleBody(group: Group, count: string): Schemas["ScaleIn"] {
  const n = Number(count);
  return n !== group.target_count ? { count: n } : {};
}

/** How many nodes a scale to `count` terminates (0 when it grows or keeps the group). */
export function terminated(group: Group, count: string): number {
  const n = Number(count);
  return Number.isInteger(n) && group.target_count !== null && n < group.target_count ? group.target_count - n : 0;
}

export function ScaleGroupModal({ cluster, group, onClose, onDone }: Props) {
  const role = usePrincipal().role;
  const [count, setCount] = useState(String(group.target_count ?? 0));
  const [agreed, setAgreed] = useState(false);
  const body = scaleBody(group, count);
  const valid = Number.isInteger(Number(count)) && Number(count) >= 0 && count.trim() !== "";
  const lost = terminated(group, count);
  const downDenied = lost > 0 ? deniedReason(role, "instance_group.scale_down") : undefined;
  const run = useRun(onDone, `scale ${group.name} to ${count}`, () =>
    api.PATCH("/api/v1/clusters/{cluster}/instance-groups/{group}", {
      // A scale-down is a destroy: the server wants confirm=true, given here by the checkbox.
      params: { path: { cluster, group: group.name }, query: lost > 0 ? { confirm: true } : {}, header: { "Idempotency-Key": run.key } },
      body,
    }),
  );
  return (
    <ActionModal
      header={`Scale ${group.name}`}
      action={lost > 0 ? "Scale down" : "Scale"}
      busy={run.busy}
      disabled={!valid || body.count === undefined || downDenied !== undefined || (lost > 0 && !agreed)}
      onClose={onClose}
      onAction={run.go}
    >
      <FormField
        label="Instance count"
        description={`Now ${group.current_count ?? "-"} running, target ${group.target_count ?? "-"} (${group.instance_type}). Capacity type and EFA-only cannot change.`}
        errorText={valid ? undefined : "A whole number, 0 or more."}
      >
        <Input type="number" inputMode="numeric" ariaLabel="Instance count" value={count} onChange={(e) => setCount(e.detail.value)} />
      </FormField>
      {lost > 0 && (
        <Alert type="warning" header={`${lost} node(s) are terminated`}>
          {downDenied ?? (
            <Checkbox checked={agreed} onChange={(e) => setAgreed(e.detail.checked)}>
              I understand: jobs on those nodes stop and their instance storage is lost.
            </Checkbox>
          )}
        </Alert>
      )}
      {run.error !== null && <ProblemAlert error={run.error} header="The group was not scaled" />}
    </ActionModal>
  );
}

export function DeleteGroupModal({ cluster, group, onClose, onDone }: Props) {
  const run = useRun(onDone, `delete ${group.name}`, () =>
    api.DELETE("/api/v1/clusters/{cluster}/instance-groups/{group}", {
      params: { path: { cluster, group: group.name }, query: { confirm: true }, header: { "Idempotency-Key": run.key } },
    }),
  );
  return (
    <ActionModal header={`Delete instance group ${group.name}?`} action="Delete group" busy={run.busy} onClose={onClose} onAction={run.go}>
      <Box variant="p">
        Its {group.current_count ?? 0} instance(s) of {group.instance_type} are terminated: jobs running on them stop, and
        data on their instance storage (local NVMe) and their attached volumes is lost. Shared storage (S3, FSx) stays.
      </Box>
      <Alert type="warning">This cannot be undone. Adding the group again creates new instances.</Alert>
      {run.error !== null && <ProblemAlert error={run.error} header="The group was not deleted" />}
    </ActionModal>
  );
}

type Call = () => Promise<{ data?: unknown; error?: unknown; response: Response }>;

/** One change from a modal: a key per modal, busy while it runs, the server's problem if any. */
export function useRun(onDone: Props["onDone"], label: string, call: Call) {
  const flash = useFlash();
  const key = useMemo(newKey, []);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const go = async () => {
    setBusy(true);
    setError(null);
    try {
      const id = await startChange(call());
      flash.push(id ? { type: "success", content: `Started: ${label} (${id}).` } : { type: "info", content: `Nothing to change: ${label}.` });
      onDone(id, label);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };
  return { key, busy, error, go: () => void go() };
}

interface ActionProps {
  header: string;
  action: string;
  busy: boolean;
  disabled?: boolean;
  onClose: () => void;
  onAction: () => void;
  children: ReactNode;
}

export function ActionModal({ header, action, busy, disabled, onClose, onAction, children }: ActionProps) {
  return (
    <Modal
      visible
      onDismiss={onClose}
      header={header}
      footer={
        <Box float="right">
          <SpaceBetween direction="horizontal" size="xs">
            <Button variant="link" onClick={onClose}>Cancel</Button>
            <Button variant="primary" loading={busy} disabled={disabled} onClick={onAction}>{action}</Button>
          </SpaceBetween>
        </Box>
      }
    >
      <SpaceBetween size="m">{children}</SpaceBetween>
    </Modal>
  );
}
