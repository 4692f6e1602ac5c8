import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Modal from "@cloudscape-design/components/modal";
import SpaceBetween from "@cloudscape-design/components/space-between";
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap } from "../../api/client";
import { ProblemAlert } from "../../components/ProblemAlert";
import { operationKey } from "./live";
import { currentStep, type Operation } from "./model";

export function CancelModal({ op, onClose }: { op: Operation; onClose: () => void }) {
  const client = useQueryClient();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const step = currentStep(op);

  const cancel = async () => {
    setBusy(true);
    setError(null);
    try {
      const next = await unwrap(api.POST("/api/v1/operations/{op_id}/cancel", { params: { path: { op_id: op.id } } }));
      client.setQueryData(operationKey(op.id), next);
      onClose();
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <Modal
      visible
      onDismiss={onClose}
      header={`Cancel operation ${op.id}?`}
      footer={
        <Box float="right">
          <SpaceBetween direction="horizontal" size="xs">
            <Button variant="link" onClick={onClose}>Keep running</Button>
            <Button variant="primary" loading={busy} onClick={() => void cancel()}>Cancel operation</Button>
          </SpaceBetween>
        </Box>
      }
    >
      <SpaceBetween size="m">
        <Box variant="p">
          The operation stops at its next safe point{step ? ` in step ${step.name}` : ""}. Steps that already
          succeeded are not undone, and what the cloud already started keeps going there. You can retry
          from the stopped step later.
        </Box>
        {error !== null && <ProblemAlert error={error} header="The operation was not cancelled" />}
      </SpaceBetween>
    </Modal>
  );
}
