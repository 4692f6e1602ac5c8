// The audit log: who did what, through which face, with what result. Newest first, paged by id.
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Header from "@cloudscape-design/components/header";
import Link from "@cloudscape-design/components/link";
import Pagination from "@cloudscape-design/components/pagination";
import SpaceBetween from "@cloudscape-design/components/space-between";
import Table, { type TableProps } from "@cloudscape-design/components/table";
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap, type Schemas } from "../api/client";
import { ProblemAlert } from "../components/ProblemAlert";
import { SearchInput } from "../components/SearchInput";
import { Status } from "../components/Status";
import { Time } from "../components/Time";
import { followHandler, setSearch, useSearch } from "../router";

type Entry = Schemas["AuditOut"];
const PAGE_SIZE = 25;

export default function Audit() {
  const search = useSearch();
  const principal = search.get("principal") ?? "";
  const action = search.get("action") ?? "";
  const paging = useKeysetPaging([principal, action].join("\n"));

  const query = useQuery({
    queryKey: ["audit", principal, action, paging.before],
    queryFn: () =>
      unwrap(
        api.GET("/api/v1/audit", {
          params: {
            query: {
              limit: PAGE_SIZE + 1,
              before_id: paging.before,
              principal: principal || undefined,
              action: action || undefined,
            },
          },
        }),
      ),
    placeholderData: keepPreviousData,
  });
  const rows = query.data?.slice(0, PAGE_SIZE) ?? [];
  const hasMore = (query.data?.length ?? 0) > PAGE_SIZE;
  const filtered = Boolean(principal || action);

  return (
    <SpaceBetween size="m">
      {query.isError && <ProblemAlert error={query.error} header="Could not read the audit log" />}
      <Table
        variant="full-page"
        stickyHeader
        items={rows}
        trackBy="id"
        loading={query.isPending}
        loadingText="Loading the audit log"
        columnDefinitions={columns}
        wrapLines
        header={
          <Header
            variant="awsui-h1-sticky"
            description="Every change made through the console, the REST API, an agent or the CLI, and who made it."
            actions={
              <Button iconName="refresh" ariaLabel="Refresh" loading={query.isFetching} onClick={() => void query.refetch()} />
            }
          >
            Audit log
          </Header>
        }
        filter={
          <SpaceBetween size="s" direction="horizontal">
            <SearchInput param="principal" placeholder="Principal (exact)" ariaLabel="Filter by principal" />
            <SearchInput param="action" placeholder="Action, e.g. token.create" ariaLabel="Filter by action" />
            {filtered && <Button onClick={() => setSearch({ principal: "", action: "" })}>Clear filters</Button>}
          </SpaceBetween>
        }
        pagination={
          <Pagination
            currentPageIndex={paging.index}
            pagesCount={paging.known + (hasMore && paging.index === paging.known ? 1 : 0)}
            openEnd={hasMore}
            onChange={(e) => paging.go(e.detail.currentPageIndex, rows[rows.length - 1]?.id)}
            ariaLabels={{ nextPageLabel: "Next page", previousPageLabel: "Previous page", pageLabel: (n) => `Page ${n}` }}
          />
        }
        empty={
          <Box textAlign="center" color="inherit" padding="l">
            <b>{filtered ? "No entries match these filters" : "No audit entries yet"}</b>
            <Box variant="p" color="inherit">
              {filtered ? "Filters match the principal and the action exactly." : "Changes appear here as they happen."}
            </Box>
          </Box>
        }
      />
    </SpaceBetween>
  );
}

/** Keyset paging: page n starts before the last id of page n-1. Resets when `resetKey` changes. */
function useKeysetPaging(resetKey: string) {
  const fresh = { key: resetKey, cursors: [undefined] as (number | undefined)[], index: 1 };
  const [stored, setStored] = useState(fresh);
  const state = stored.key === resetKey ? stored : fresh;
  return {
    index: state.index,
    known: state.cursors.length,
    before: state.cursors[state.index - 1],
    go(page: number, lastIdOfCurrent: number | undefined) {
      let cursors = state.cursors;
      if (page > cursors.length) {
        if (lastIdOfCurrent === undefined) return;
        cursors = [...cursors, lastIdOfCurrent];
      }
      setStored({ key: resetKey, cursors, index: page });
    },
  };
}

const columns: TableProps.ColumnDefinition<Entry>[] = [
  { id: "at", header: "Time", cell: (e) => <Time value={e.at} /> },
  {
    id: "principal",
    header: "Principal",
    cell: (e) => (
      <>
        <Link href={`/audit?principal=${encodeURIComponent(e.principal)}`} onFollow={followHandler}>
          {e.principal}
        </Link>
        <Box variant="small" display="block">
          {e.role} · via {e.face}
        </Box>
      </>
    ),
  },
  { id: "action", header: "Action", cell: (e) => <code>{e.action}</code> },
  { id: "target", header: "Target", cell: (e) => e.target },
  { id: "result", header: "Result", cell: (e) => <Status value={e.result} /> },
  {
    id: "operation",
    header: "Operation",
    cell: (e) =>
      e.operation_id ? (
        <Link href={`/operations/${e.operation_id}`} onFollow={followHandler}>
          {e.operation_id}
        </Link>
      ) : (
        "-"
      ),
  },
];
