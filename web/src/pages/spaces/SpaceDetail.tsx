// One dev space: its state, resources, mounts and pods; Start, Stop and Delete (each through a
// modal); its server's last log lines; and its files as its server sees them. Opened with
// ?op=<id> (after a create or a change) it follows that operation live.
import Button from "@cloudscape-design/components/button";
import Header from "@cloudscape-design/components/header";
import SpaceBetween from "@cloudscape-design/components/space-between";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap } from "../../api/client";
import { problemOf } from "../../api/problem";
import { NotLoaded } from "../../components/NotLoaded";
import { PodsTable } from "../../components/PodsTable";
import { deniedReason } from "../../permissions";
import { navigate, setSearch, useSearch } from "../../router";
import type { PageProps } from "../../routes";
import { usePrincipal } from "../../session";
import { OperationContainer } from "../clusters/ProgressPanel";
import { MOVING, spaceKey, spacesKey, spacesPath, type Desired, type Space } from "./model";
import { SpaceFiles } from "./SpaceFiles";
import { SpaceLogs } from "./SpaceLogs";
import { DeleteSpaceModal, StateModal } from "./SpaceModals";
import { SpaceState } from "./SpaceState";
import { MountsTable, SpaceSummary } from "./SpaceSummary";

type Modal = Desired | "delete" | null;

// A blank tab first (a popup opened after an await would be blocked), then the space's
// one-time link; the console's tab stays.
async function openLab(cluster: string, name: string): Promise<void> {
  const tab = window.open("about:blank", "_blank");
  try {
    const opened = await unwrap(api.POST("/api/v1/clusters/{cluster}/spaces/{name}/open", { params: { path: { cluster, name } } }));
    if (tab) {
      tab.opener = null;
      tab.location.href = opened.url;
    }
  } catch (err) {
    tab?.close();
    throw err;
  }
}

function Actions({ s, role, onOpen, cluster }: { s: Space; role: string; onOpen: (m: Modal) => void; cluster: string }) {
  const changing = deniedReason(role, "space.state");
  const deleting = deniedReason(role, "space.delete");
  const opening = deniedReason(role, "space.open");
  const submitting = deniedReason(role, "job.submit");
  return (
    <SpaceBetween direction="horizontal" size="xs">
      <Button variant="primary" disabled={Boolean(opening) || s.state !== "Running"} disabledReason={opening ?? "Start the space first."} onClick={() => void openLab(cluster, s.name)}>Open JupyterLab</Button>
      <Button disabled={Boolean(submitting)} disabledReason={submitting} onClick={() => navigate(`/clusters/${cluster}/submit-job?space=${encodeURIComponent(s.name)}`)}>Run a script as a job</Button>
      <Button disabled={Boolean(changing) || s.desired === "Running"} disabledReason={changing} onClick={() => onOpen("Running")}>Start</Button>
      <Button disabled={Boolean(changing) || s.desired === "Stopped"} disabledReason={changing} onClick={() => onOpen("Stopped")}>Stop</Button>
      <Button disabled={Boolean(deleting)} disabledReason={deleting} onClick={() => onOpen("delete")}>Delete</Button>
    </SpaceBetween>
  );
}

export default function SpaceDetail({ params }: PageProps) {
  const { cluster, space: name } = params;
  const op = useSearch().get("op");
  const client = useQueryClient();
  const role = usePrincipal().role;
  const [modal, setModal] = useState<Modal>(null);
  const query = useQuery({
    queryKey: spaceKey(cluster, name),
    queryFn: async () => unwrap(api.GET("/api/v1/clusters/{cluster}/spaces/{name}", { params: { path: { cluster, name } } })),
    refetchInterval: (q) => (q.state.data && !MOVING.has(q.state.data.state) && !op ? 15000 : 3000),
    retry: (n, err) => problemOf(err).status !== 404 && n < 2,
  });
  const s = query.data;
  const progress = op && <OperationContainer opId={op} cluster={cluster} />;
  if (!s) return <NotLoaded noun="space" name={name} query={query} op={op} progress={progress} />;
  const changed = (opId: string | null) => {
    setModal(null);
    void client.invalidateQueries({ queryKey: spaceKey(cluster, name) });
    void client.invalidateQueries({ queryKey: spacesKey(cluster) });
    if (opId) setSearch({ op: opId });
  };
  const close = () => setModal(null);
  return (
    <SpaceBetween size="l">
      <Header
        variant="h1"
        description={`${s.display_name !== s.name ? `${s.display_name}: ` : ""}JupyterLab on ${cluster}`}
        info={<span data-testid="space-state"><SpaceState value={s.state} /></span>}
        actions={<Actions s={s} role={role} onOpen={setModal} cluster={cluster} />}
      >
        {s.name}
      </Header>
      {progress}
      <SpaceSummary s={s} />
      <MountsTable s={s} />
      <PodsTable pods={s.pods ?? []} empty="No pods: stopped, or not started yet." />
      <SpaceFiles cluster={cluster} name={name} running={s.state === "Running"} denied={deniedReason(role, "space.files")} />
      <SpaceLogs cluster={cluster} name={name} />
      {(modal === "Running" || modal === "Stopped") && <StateModal cluster={cluster} space={s} desired={modal} onClose={close} onDone={changed} />}
      {modal === "delete" && (
        <DeleteSpaceModal
          cluster={cluster}
          space={s}
          onClose={close}
          onDone={() => {
            setModal(null);
            void client.invalidateQueries({ queryKey: spacesKey(cluster) });
            navigate(spacesPath(cluster));
          }}
        />
      )}
    </SpaceBetween>
  );
}
