// Operations started from the cluster page (add, scale, delete a group; reboot, replace,
// delete a node), each followed live; groups and nodes are re-read when one finishes.
import Container from "@cloudscape-design/components/container";
import Header from "@cloudscape-design/components/header";
import Link from "@cloudscape-design/components/link";
import SpaceBetween from "@cloudscape-design/components/space-between";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useState } from "react";
import { Status } from "../../components/Status";
import { followHandler } from "../../router";
import { fetchOperation, operationKey, useLiveOperation } from "../operations/live";

export interface Started {
  id: string;
  label: string;
  cluster: string;
}

export interface RecentOpsApi {
  items: Started[];
  add: (id: string, label: string) => void;
}

export function useRecentOps(cluster: string): RecentOpsApi {
  const [items, setItems] = useState<Started[]>([]);
  const client = useQueryClient();
  const add = useCallback(
    (id: string, label: string) => {
      setItems((all) => [{ id, label, cluster }, ...all.filter((o) => o.id !== id)].slice(0, 5));
      void client.invalidateQueries({ queryKey: ["cluster", cluster] });
    },
    [cluster, client],
  );
  return { items, add };
}

export function RecentOps({ ops }: { ops: RecentOpsApi }) {
  if (!ops.items.length) return null;
  return (
    <Container header={<Header variant="h2">Started here</Header>}>
      <SpaceBetween size="xs">
        {ops.items.map((o) => (
          <OpRow key={o.id} started={o} />
        ))}
      </SpaceBetween>
    </Container>
  );
}

function OpRow({ started }: { started: Started }) {
  const client = useQueryClient();
  const query = useQuery({ queryKey: operationKey(started.id), queryFn: () => fetchOperation(started.id) });
  useLiveOperation(started.id, query.data);
  const status = query.data?.status;
  const updated = query.data?.updated_at;
  useEffect(() => {
    if (updated) void client.invalidateQueries({ queryKey: ["cluster", started.cluster] });
  }, [updated, started.cluster, client]);
  const step = query.data?.steps.find((s) => s.status !== "succeeded");
  return (
    <SpaceBetween direction="horizontal" size="m" alignItems="center">
      <span data-testid={`recent-${started.id}`}>
        <Status value={status ?? "pending"} />
      </span>
      <span>{started.label}</span>
      <Link href={`/operations/${started.id}`} onFollow={followHandler}>
        {started.id}
      </Link>
      {step && status !== "succeeded" && <span>step {step.name}{step.phase ? ` (${step.phase})` : ""}</span>}
      {step?.error && <span>{step.error.code}: {step.error.hint ?? step.error.message}</span>}
    </SpaceBetween>
  );
}
