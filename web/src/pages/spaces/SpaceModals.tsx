// Start or stop a space (its home volume stays either way) and delete it (its server; the home
// volume is kept unless an admin deletes it too, a destroy: confirm=true), each through a
// modal, each with its own idempotency key.
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Checkbox from "@cloudscape-design/components/checkbox";
import { useState } from "react";
import { api } from "../../api/client";
import { ProblemAlert } from "../../components/ProblemAlert";
import { allows, NEEDS } from "../../permissions";
import { usePrincipal } from "../../session";
import { ActionModal, useRun } from "../clusters/GroupModals";
import type { Desired, Space } from "./model";

interface Props {
  cluster: string;
  space: Space;
  onClose: () => void;
  onDone: (opId: string | null, label: string) => void;
}

const VERB: Record<Desired, string> = { Running: "Start", Stopped: "Stop" };

export function StateModal({ cluster, space, desired, onClose, onDone }: Props & { desired: Desired }) {
  const verb = VERB[desired];
  const run = useRun(onDone, `${verb.toLowerCase()} ${space.name}`, () =>
    api.PATCH("/api/v1/clusters/{cluster}/spaces/{name}", {
      params: { path: { cluster, name: space.name }, header: { "Idempotency-Key": run.key } },
      body: { desired },
    }),
  );
  return (
    <ActionModal header={`${verb} space ${space.name}?`} action={verb} busy={run.busy} onClose={onClose} onAction={run.go}>
      <Box variant="p">
        {desired === "Stopped"
          ? "Its server stops and its compute is freed; unsaved work in open notebooks is lost. Its home volume stays."
          : "Its server starts again on a node with room, with the same home volume."}
      </Box>
      {run.error !== null && <ProblemAlert error={run.error} header={`The space was not ${desired === "Stopped" ? "stopped" : "started"}`} />}
    </ActionModal>
  );
}

export function DeleteSpaceModal({ cluster, space, onClose, onDone }: Props) {
  const mayDestroy = allows(usePrincipal().role, "space.delete_home");
  const [home, setHome] = useState(false);
  const run = useRun(onDone, `delete ${space.name}`, () =>
    api.DELETE("/api/v1/clusters/{cluster}/spaces/{name}", {
      params: { path: { cluster, name: space.name }, query: home ? { delete_home: true, confirm: true } : {}, header: { "Idempotency-Key": run.key } },
    }),
  );
  return (
    <ActionModal header={`Delete space ${space.name}?`} action={home ? "Delete space and home" : "Delete space"} busy={run.busy} onClose={onClose} onAction={run.go}>
      <Box variant="p">
        {home
          ? `Its server and its home volume (${space.storage ?? "-"}) are deleted.`
          : `Its server is deleted. Its home volume (${space.storage ?? "-"}) is kept: a new space of this name finds it.`}{" "}
        The bucket's files under /data, /models and /outputs are not touched.
      </Box>
      {mayDestroy ? (
        <Checkbox checked={home} onChange={(e) => setHome(e.detail.checked)}>
          Also delete its home volume
        </Checkbox>
      ) : (
        <Box variant="small" color="text-body-secondary">Deleting the home volume too needs the {NEEDS["space.delete_home"]} role.</Box>
      )}
      {home && <Alert type="warning">The files in its home are lost. This cannot be undone.</Alert>}
      {run.error !== null && <ProblemAlert error={run.error} header="The space was not deleted" />}
    </ActionModal>
  );
}
