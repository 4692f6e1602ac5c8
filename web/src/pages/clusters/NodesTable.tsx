// Nodes of a cluster: health (HyperPod + Kubernetes), GPU allocation, fault and the suggested
// next step; reboot, replace and delete through confirmation modals.
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Header from "@cloudscape-design/components/header";
import Pagination from "@cloudscape-design/components/pagination";
import SegmentedControl from "@cloudscape-design/components/segmented-control";
import SpaceBetween from "@cloudscape-design/components/space-between";
import Table from "@cloudscape-design/components/table";
import { useQuery } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { api, unwrap } from "../../api/client";
import { ProblemAlert } from "../../components/ProblemAlert";
import { Status } from "../../components/Status";
import { deniedReason, type Action } from "../../permissions";
import { usePrincipal } from "../../session";
import { nodesKey, type Node } from "./model";
import { NodeActionModal, type NodeAction } from "./NodeModals";
import { DiagnoseButton } from "../diagnose/DiagnoseButton";

// A 1,000-node fleet renders one page at a time; the list itself is revalidated by the browser
// with its ETag (If-None-Match -> 304), so an unchanged fleet costs the server no body.
const PAGE_SIZE = 50;
const HEALTH_FILTERS = ["all", "unhealthy", "in_progress", "healthy"] as const;
type HealthFilter = (typeof HEALTH_FILTERS)[number];

export function NodesTable({ cluster, onStarted }: { cluster: string; onStarted: (id: string, label: string) => void }) {
  const role = usePrincipal().role;
  const [selected, setSelected] = useState<Node[]>([]);
  const [action, setAction] = useState<NodeAction | null>(null);
  const query = useQuery({
    queryKey: nodesKey(cluster),
    queryFn: () => unwrap(api.GET("/api/v1/clusters/{cluster}/nodes", { params: { path: { cluster } } })),
    // Health changes on its own (faults, HyperPod's auto-recovery): quick while a node is not
    // healthy, slow otherwise.
    refetchInterval: (q) => (q.state.data?.some((n) => n.health.state !== "healthy") ? 2000 : 10_000),
  });
  const [health, setHealth] = useState<HealthFilter>("all");
  const [page, setPage] = useState(1);
  const all = query.data;
  const filtered = useMemo(
    () => (all ?? []).filter((n) => health === "all" || n.health.state === health),
    [all, health],
  );
  const pages = Math.max(1, Math.ceil(filtered.length / PAGE_SIZE));
  const current = Math.min(page, pages);
  const items = filtered.slice((current - 1) * PAGE_SIZE, current * PAGE_SIZE);
  const node = (all ?? []).find((n) => n.id === selected[0]?.id);
  const denied = (a: Action) => deniedReason(role, a) ?? (node ? undefined : "Select a node.");
  const button = (a: NodeAction, label: string) => {
    const reason = denied(`node.${a}`);
    return (
      <Button disabled={Boolean(reason)} disabledReason={reason} onClick={() => setAction(a)}>
        {label}
      </Button>
    );
  };

  return (
    <>
      {query.isError && <ProblemAlert error={query.error} header="Could not list nodes" />}
      <Table
        variant="container"
        loading={query.isLoading}
        loadingText="Loading nodes"
        items={items}
        trackBy="id"
        selectionType="single"
        selectedItems={node ? [node] : []}
        onSelectionChange={(e) => setSelected(e.detail.selectedItems)}
        ariaLabels={{ itemSelectionLabel: (_s, n) => `Select node ${n.id}`, selectionGroupLabel: "Nodes" }}
        wrapLines
        filter={
          <SegmentedControl
            label="Health"
            selectedId={health}
            onChange={(e) => {
              setHealth(e.detail.selectedId as HealthFilter);
              setPage(1);
            }}
            options={HEALTH_FILTERS.map((h) => ({ id: h, text: h.replace("_", " ") }))}
          />
        }
        pagination={
          <Pagination
            currentPageIndex={current}
            pagesCount={pages}
            onChange={(e) => setPage(e.detail.currentPageIndex)}
            ariaLabels={{ nextPageLabel: "Next page", previousPageLabel: "Previous page",
              pageLabel: (p) => `Page ${p} of ${pages}` }}
          />
        }
        header={
          <Header
            variant="h2"
            counter={health === "all" ? `(${filtered.length})` : `(${filtered.length}/${all?.length ?? 0})`}
            description="Investigate first; then reboot; replace only when a reboot does not help."
            actions={
              <SpaceBetween direction="horizontal" size="xs">
                <DiagnoseButton subject={node ? { kind: "node", cluster, node: node.id } : null} disabledReason="Select a node." onStarted={onStarted} />
                {button("delete", "Delete")}
                {button("replace", "Replace")}
                {button("reboot", "Reboot")}
              </SpaceBetween>
            }
          >
            Nodes
          </Header>
        }
        columnDefinitions={[
          {
            id: "id",
            header: "Node",
            isRowHeader: true,
            cell: (n) => (
              <>
                <span style={{ whiteSpace: "nowrap" }}>{n.id}</span>
                <Box variant="small" display="block">{n.instance_group ?? "-"} · {n.instance_type ?? "-"}</Box>
              </>
            ),
          },
          {
            id: "health",
            header: "Health",
            cell: (n) => (
              <>
                <Status value={n.health.state} />
                <Box variant="small" display="block">
                  {n.health.instance_status} · {n.health.kubernetes_ready ? "Ready" : "NotReady"}
                  {n.health.node_health_status ? ` · ${n.health.node_health_status}` : ""}
                </Box>
              </>
            ),
          },
          { id: "gpus", header: "GPUs allocated", cell: (n) => `${n.gpus.allocated} / ${n.gpus.allocatable} (of ${n.gpus.capacity})` },
          { id: "dhc", header: "Deep health check", cell: (n) => n.health.deep_health_check_status ?? "-" },
          {
            id: "fault",
            header: "Fault",
            cell: (n) =>
              n.health.fault_type ? (
                <Box color="text-status-error">
                  {n.health.fault_type}
                  {n.health.fault_reason && n.health.fault_reason !== n.health.fault_type ? `: ${n.health.fault_reason}` : ""}
                </Box>
              ) : (
                "-"
              ),
          },
          { id: "next", header: "Suggested next step", cell: (n) => <NextStep node={n} />, minWidth: 200 },
        ]}
        empty={<Box textAlign="center">No nodes.</Box>}
      />
      {action && node && (
        <NodeActionModal
          cluster={cluster}
          node={node}
          action={action}
          onClose={() => setAction(null)}
          onDone={(id, label) => {
            setAction(null);
            if (id) onStarted(id, label);
          }}
        />
      )}
    </>
  );
}

function NextStep({ node }: { node: Node }) {
  const h = node.health;
  const suggested = h.escalation.filter((e) => e.suggested);
  if (!h.suggested_action && !suggested.length) return <>{h.note ?? "-"}</>;
  return (
    <>
      {h.suggested_action && <b>{h.suggested_action}</b>}
      {suggested.map((e) => (
        <Box key={e.action} variant="small" display="block">{e.action}: {e.why}</Box>
      ))}
      {h.note && <Box variant="small" display="block">{h.note}</Box>}
    </>
  );
}
