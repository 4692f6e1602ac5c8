// A space's summary (state and why, what it asks of its node, its home and idle stop, the
// template it was made from, who made it) and where its volumes are mounted.
import Box from "@cloudscape-design/components/box";
import Container from "@cloudscape-design/components/container";
import Header from "@cloudscape-design/components/header";
import KeyValuePairs from "@cloudscape-design/components/key-value-pairs";
import Table from "@cloudscape-design/components/table";
import { resourcesText, type Space } from "./model";
import { SpaceState } from "./SpaceState";

export function SpaceSummary({ s }: { s: Space }) {
  return (
    <Container header={<Header variant="h2">Summary</Header>}>
      <KeyValuePairs
        columns={4}
        items={[
          { label: "State", value: <SpaceState value={s.state} /> },
          { label: "Desired", value: <span data-testid="space-desired">{s.desired}</span> },
          { label: "Message", value: s.message || "-" },
          { label: "Resources", value: <span data-testid="space-resources">{resourcesText(s)}</span> },
          { label: "Instance group", value: s.instance_group ?? "any" },
          { label: "Home volume", value: s.storage ?? "-" },
          { label: "Idle stop", value: s.idle_minutes ? `after ${s.idle_minutes} min` : "never" },
          { label: "App", value: s.app },
          { label: "Image", value: s.image || "-" },
          { label: "Template", value: <span data-testid="space-template">{s.template ?? "none"}</span> },
          { label: "Made by", value: s.made_by === "podplane" ? `podplane (${s.created_by ?? "-"})` : "other (hyp, kubectl)" },
        ]}
      />
    </Container>
  );
}

export function MountsTable({ s }: { s: Space }) {
  const mounts = s.mounts ?? [];
  return (
    <Table
      variant="container"
      items={mounts}
      trackBy="path"
      header={<Header variant="h2" counter={`(${mounts.length})`} description="The home volume, and the cluster bucket at the paths jobs use.">Mounts</Header>}
      columnDefinitions={[
        { id: "path", header: "Path", isRowHeader: true, cell: (m) => m.path },
        { id: "source", header: "Source", cell: (m) => m.source },
      ]}
      empty={<Box textAlign="center" color="inherit">No volumes.</Box>}
    />
  );
}
