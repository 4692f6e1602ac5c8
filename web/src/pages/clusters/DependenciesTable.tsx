// What is installed in the cluster (EKS add-ons and operators, the training operator among
// them): the cluster status reports each unit's kind, version and health. A degraded cluster
// lists its drifted units (with what depends on each) and offers Reconcile, plan first.
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Header from "@cloudscape-design/components/header";
import SpaceBetween from "@cloudscape-design/components/space-between";
import Table from "@cloudscape-design/components/table";
import { useState, type ReactNode } from "react";
import { Status } from "../../components/Status";
import { deniedReason } from "../../permissions";
import { usePrincipal } from "../../session";
import type { ClusterDetail, Dependencies, Dependency, Drift } from "./model";
import { ReconcileModal } from "./ReconcileModal";

interface Props {
  deps: Dependencies;
  cluster?: ClusterDetail;
  onStarted?: (opId: string, label: string) => void;
}

export function DependenciesTable({ deps, cluster, onStarted }: Props) {
  const [reconciling, setReconciling] = useState(false);
  // reconcile is an operator's change, like a create (the server enforces it either way)
  const denied = deniedReason(usePrincipal().role, "cluster.create");
  const canReconcile = cluster?.origin === "created" && (cluster.state === "active" || cluster.state === "degraded");
  const table = <DependencyRows deps={deps} actions={cluster && canReconcile ? (
    <Button disabled={Boolean(denied)} disabledReason={denied} onClick={() => setReconciling(true)}>Reconcile</Button>
  ) : undefined} />;
  return (
    <SpaceBetween size="m">
      {cluster?.drift && <DriftAlert drift={cluster.drift} />}
      {table}
      {reconciling && cluster && (
        <ReconcileModal cluster={cluster.name} onClose={() => setReconciling(false)} onStarted={onStarted ?? (() => {})} />
      )}
    </SpaceBetween>
  );
}

function DriftAlert({ drift }: { drift: Drift }) {
  return (
    <div data-testid="drift">
      <Alert type="warning" header={`Degraded since ${drift.since ?? "-"}: ${drift.units.length} unit(s) drifted`}>
        <ul>
          {drift.units.map((u) => (
            <li key={u.unit}>
              <b>{u.unit}</b> ({u.kind}): {u.summary}
              {u.dependants.length > 0 && <> — needed by {u.dependants.join(", ")}</>}
            </li>
          ))}
        </ul>
        Reconcile puts these back; the plan is shown first.
      </Alert>
    </div>
  );
}

function DependencyRows({ deps, actions }: { deps: Dependencies; actions?: ReactNode }) {
  if (isUnknown(deps)) {
    const error = deps.error;
    return (
      <Box color="text-status-error">
        Dependencies could not be read: {error.code}: {error.message}
      </Box>
    );
  }
  const items = Object.entries(deps).map(([name, d]) => ({ name, ...d }));
  return (
    <Table
      variant="container"
      header={
        <Header variant="h2" counter={`(${items.length})`} actions={actions} description="Add-ons and operators the control plane installs and checks.">
          Dependencies
        </Header>
      }
      items={items}
      trackBy="name"
      wrapLines
      columnDefinitions={[
        { id: "name", header: "Name", cell: (d) => d.name, isRowHeader: true },
        { id: "kind", header: "Kind", cell: (d) => d.kind },
        { id: "version", header: "Version", cell: (d) => d.version ?? "-" },
        {
          id: "health",
          header: "Health",
          cell: (d) => <Status value={!d.installed ? "not installed" : d.healthy === false ? "unhealthy" : d.healthy ? "healthy" : "unknown"} />,
        },
      ]}
      empty={<Box textAlign="center">Nothing installed yet.</Box>}
    />
  );
}

/** The status says why it could not read the cluster's dependencies, or lists them. */
function isUnknown(deps: Dependencies): deps is Extract<Dependencies, { error: unknown }> {
  return "error" in deps && typeof deps.error === "object" && deps.error !== null && "code" in deps.error;
}

export type { Dependency };
