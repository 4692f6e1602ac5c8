// What is installed in the cluster (EKS add-ons and operators, the training operator among
// them), read-only: the cluster status reports each unit's kind, version and health.
import Box from "@cloudscape-design/components/box";
import Header from "@cloudscape-design/components/header";
import Table from "@cloudscape-design/components/table";
import { Status } from "../../components/Status";
import type { Dependencies, Dependency } from "./model";

export function DependenciesTable({ deps }: { deps: Dependencies }) {
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
        <Header variant="h2" counter={`(${items.length})`} description="Add-ons and operators the control plane installs and checks.">
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
