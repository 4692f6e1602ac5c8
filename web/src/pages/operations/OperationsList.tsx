// Every operation, newest first, filtered by status, kind and target (kept in the URL).
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Header from "@cloudscape-design/components/header";
import Link from "@cloudscape-design/components/link";
import Pagination from "@cloudscape-design/components/pagination";
import Select, { type SelectProps } from "@cloudscape-design/components/select";
import SpaceBetween from "@cloudscape-design/components/space-between";
import Table, { type TableProps } from "@cloudscape-design/components/table";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap } from "../../api/client";
import { ProblemAlert } from "../../components/ProblemAlert";
import { SearchInput } from "../../components/SearchInput";
import { Status } from "../../components/Status";
import { formatDuration, Time } from "../../components/Time";
import { followHandler, setSearch, useSearch } from "../../router";
import { currentStep, elapsedMs, isTerminal, STATUSES, type Operation } from "./model";

const PAGE_SIZE = 25;
type StatusFilter = (typeof STATUSES)[number];
const STATUS_OPTIONS: SelectProps.Option[] = [
  { value: "", label: "Any status" },
  ...STATUSES.map((s) => ({ value: s, label: s })),
];

export default function OperationsList() {
  const search = useSearch();
  const status = search.get("status") ?? "";
  const kind = search.get("kind") ?? "";
  const target = search.get("target") ?? "";
  const paging = useCursorPaging([status, kind, target].join("\n"));

  const query = useQuery({
    queryKey: ["operations", status, kind, target, paging.cursor],
    queryFn: () =>
      unwrap(
        api.GET("/api/v1/operations", {
          params: {
            query: {
              limit: PAGE_SIZE,
              cursor: paging.cursor,
              status: (status || undefined) as StatusFilter | undefined,
              kind: kind || undefined,
              target: target || undefined,
            },
          },
        }),
      ),
    placeholderData: keepPreviousData,
    // While something on screen is still running, keep the list fresh.
    refetchInterval: (q) => (q.state.data?.items.some((op) => !isTerminal(op)) ? 3000 : false),
  });
  const items = query.data?.items ?? [];
  const next = query.data?.next_cursor ?? undefined;
  const filtered = Boolean(status || kind || target);

  return (
    <SpaceBetween size="m">
      {query.isError && <ProblemAlert error={query.error} header="Could not list operations" />}
      <Table
        variant="full-page"
        stickyHeader
        items={items}
        trackBy="id"
        loading={query.isPending}
        loadingText="Loading operations"
        columnDefinitions={columns}
        wrapLines
        header={
          <Header
            variant="awsui-h1-sticky"
            description="Every change runs as an operation of ordered steps that survives restarts; a failed step can be retried on its own."
            actions={
              <Button iconName="refresh" ariaLabel="Refresh" loading={query.isFetching} onClick={() => void query.refetch()} />
            }
          >
            Operations
          </Header>
        }
        filter={
          <SpaceBetween size="s" direction="horizontal">
            <Select
              selectedOption={STATUS_OPTIONS.find((o) => o.value === status) ?? STATUS_OPTIONS[0]}
              options={STATUS_OPTIONS}
              ariaLabel="Filter by status"
              onChange={(e) => setSearch({ status: e.detail.selectedOption.value })}
            />
            <SearchInput param="kind" placeholder="Kind (exact)" ariaLabel="Filter by kind" />
            <SearchInput param="target" placeholder="Target (exact)" ariaLabel="Filter by target" />
            {filtered && <Button onClick={() => setSearch({ status: "", kind: "", target: "" })}>Clear filters</Button>}
          </SpaceBetween>
        }
        pagination={
          <Pagination
            currentPageIndex={paging.index}
            pagesCount={paging.known + (next && paging.index === paging.known ? 1 : 0)}
            openEnd={Boolean(next)}
            onChange={(e) => paging.go(e.detail.currentPageIndex, next)}
            ariaLabels={{ nextPageLabel: "Next page", previousPageLabel: "Previous page", pageLabel: (n) => `Page ${n}` }}
          />
        }
        empty={
          <Box textAlign="center" color="inherit" padding="l">
            <b>{filtered ? "No operations match these filters" : "No operations yet"}</b>
            <Box variant="p" color="inherit">
              {filtered ? "Kind and target match exactly." : "Creating a cluster, adding an instance group or enabling a feature starts one."}
            </Box>
          </Box>
        }
      />
    </SpaceBetween>
  );
}

/** Cursor paging: page n is read with the cursor page n-1 returned. Resets with `resetKey`. */
function useCursorPaging(resetKey: string) {
  const fresh = { key: resetKey, cursors: [undefined] as (string | undefined)[], index: 1 };
  const [stored, setStored] = useState(fresh);
  const state = stored.key === resetKey ? stored : fresh;
  return {
    index: state.index,
    known: state.cursors.length,
    cursor: state.cursors[state.index - 1],
    go(page: number, nextCursor: string | undefined) {
      let cursors = state.cursors;
      if (page > cursors.length) {
        if (!nextCursor) return;
        cursors = [...cursors, nextCursor];
      }
      setStored({ key: resetKey, cursors, index: page });
    },
  };
}

function stepSummary(op: Operation): string {
  const step = currentStep(op);
  if (!step) return `${op.steps.length}/${op.steps.length} steps`;
  const done = op.steps.filter((s) => s.status === "succeeded").length;
  return `${done}/${op.steps.length} · ${step.name}${step.phase ? ` (${step.phase})` : ""}`;
}

const columns: TableProps.ColumnDefinition<Operation>[] = [
  {
    id: "id",
    header: "Operation",
    cell: (op) => (
      <>
        <Link href={`/operations/${op.id}`} onFollow={followHandler}>
          {op.id}
        </Link>
        <Box variant="small" display="block">
          {op.kind}
        </Box>
      </>
    ),
    isRowHeader: true,
  },
  { id: "target", header: "Target", cell: (op) => op.target },
  { id: "status", header: "Status", cell: (op) => <Status value={op.status} /> },
  { id: "step", header: "Progress", cell: stepSummary },
  { id: "by", header: "Requested by", cell: (op) => `${op.requested_by.principal} (${op.requested_by.face})` },
  {
    id: "created",
    header: "Created",
    cell: (op) => (
      <>
        <Time value={op.created_at} />
        <Box variant="small" display="block">
          {isTerminal(op) ? "took" : "running for"}{" "}
          {formatDuration(elapsedMs(op.created_at, isTerminal(op) ? op.updated_at : null, Date.now()) ?? 0)}
        </Box>
      </>
    ),
  },
];
