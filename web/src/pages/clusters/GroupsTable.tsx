// Instance groups of a cluster: add (capacity type, EFA-only, subnet placement), scale (sends
// only the new count), delete (confirmation naming what is lost).
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Header from "@cloudscape-design/components/header";
import SpaceBetween from "@cloudscape-design/components/space-between";
import Table from "@cloudscape-design/components/table";
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap } from "../../api/client";
import { ProblemAlert } from "../../components/ProblemAlert";
import { Status } from "../../components/Status";
import { deniedReason } from "../../permissions";
import { usePrincipal } from "../../session";
import { AddGroupModal } from "./AddGroupModal";
import { DeleteGroupModal, ScaleGroupModal } from "./GroupModals";
import { groupsKey, type ClusterDetail, type Group } from "./model";

type Modal = "add" | "scale" | "delete" | null;

export function GroupsTable({ cluster, onStarted }: { cluster: ClusterDetail; onStarted: (id: string, label: string) => void }) {
  const role = usePrincipal().role;
  const [selected, setSelected] = useState<Group[]>([]);
  const [modal, setModal] = useState<Modal>(null);
  const query = useQuery({
    queryKey: groupsKey(cluster.name),
    queryFn: () => unwrap(api.GET("/api/v1/clusters/{cluster}/instance-groups", { params: { path: { cluster: cluster.name } } })),
    refetchInterval: (q) => (q.state.data?.some((g) => g.status !== "InService" || g.current_count !== g.target_count) ? 2000 : false),
  });
  const items = query.data ?? [];
  const group = items.find((g) => g.name === selected[0]?.name);
  const addDenied = deniedReason(role, "instance_group.add");
  const scaleDenied = deniedReason(role, "instance_group.scale") ?? (group ? undefined : "Select a group.");
  const deleteDenied = deniedReason(role, "instance_group.delete") ?? (group ? undefined : "Select a group.");
  const done = (id: string | null, label: string) => {
    setModal(null);
    if (id) onStarted(id, label);
  };

  return (
    <>
      {query.isError && <ProblemAlert error={query.error} header="Could not list instance groups" />}
      <Table
        variant="container"
        loading={query.isLoading}
        loadingText="Loading instance groups"
        items={items}
        trackBy="name"
        selectionType="single"
        selectedItems={group ? [group] : []}
        onSelectionChange={(e) => setSelected(e.detail.selectedItems)}
        ariaLabels={{ itemSelectionLabel: (_s, g) => `Select group ${g.name}`, selectionGroupLabel: "Instance groups" }}
        wrapLines
        header={
          <Header
            variant="h2"
            counter={`(${items.length})`}
            actions={
              <SpaceBetween direction="horizontal" size="xs">
                <Button disabled={Boolean(deleteDenied)} disabledReason={deleteDenied} onClick={() => setModal("delete")}>Delete</Button>
                <Button disabled={Boolean(scaleDenied)} disabledReason={scaleDenied} onClick={() => setModal("scale")}>Scale</Button>
                <Button variant="primary" disabled={Boolean(addDenied)} disabledReason={addDenied} onClick={() => setModal("add")}>
                  Add instance group
                </Button>
              </SpaceBetween>
            }
          >
            Instance groups
          </Header>
        }
        columnDefinitions={[
          { id: "name", header: "Name", cell: (g) => g.name, isRowHeader: true },
          {
            id: "status",
            header: "Status",
            cell: (g) => (
              <>
                <Status value={g.status ?? "-"} />
                {g.failure_message && <Box variant="small" color="text-status-error" display="block">{g.failure_message}</Box>}
              </>
            ),
          },
          { id: "count", header: "Instances", cell: (g) => `${g.current_count ?? "-"} / ${g.target_count ?? "-"}` },
          { id: "type", header: "Instance type", cell: (g) => g.instance_type ?? "-" },
          { id: "capacity", header: "Capacity", cell: (g) => g.capacity_type },
          { id: "efa", header: "EFA-only", cell: (g) => (g.efa_only ? "yes" : "no"), minWidth: 90 },
          { id: "subnets", header: "Subnets", cell: (g) => g.subnets.join(", ") || "-" },
        ]}
        empty={<Box textAlign="center">No instance groups.</Box>}
      />
      {modal === "add" && <AddGroupModal cluster={cluster} onClose={() => setModal(null)} onDone={done} />}
      {modal === "scale" && group && <ScaleGroupModal cluster={cluster.name} group={group} onClose={() => setModal(null)} onDone={done} />}
      {modal === "delete" && group && <DeleteGroupModal cluster={cluster.name} group={group} onClose={() => setModal(null)} onDone={done} />}
    </>
  );
}
