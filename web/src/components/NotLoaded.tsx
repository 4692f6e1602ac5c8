import Header from "@cloudscape-design/components/header";
import SpaceBetween from "@cloudscape-design/components/space-between";
import StatusIndicator from "@cloudscape-design/components/status-indicator";
import type { UseQueryResult } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { problemOf } from "../api/problem";
import { ProblemAlert } from "./ProblemAlert";

/** A detail page before its object reads back: loading, an error, or (a 404 while the
 * operation that creates it runs) waiting for it, under the operation's progress. */
export function NotLoaded({ noun, name, query, op, progress }: {
  noun: string;
  name: string;
  query: UseQueryResult<unknown>;
  op: string | null;
  progress: ReactNode;
}) {
  const creating = query.isError && problemOf(query.error).status === 404 && !!op;
  return (
    <SpaceBetween size="l">
      <Header variant="h1">{name}</Header>
      {progress}
      {creating && <StatusIndicator type="pending">Waiting for the {noun} to be created</StatusIndicator>}
      {query.isError && !creating && <ProblemAlert error={query.error} header={`Could not read ${noun} ${name}`} />}
      {query.isLoading && <StatusIndicator type="loading">Loading {noun} {name}</StatusIndicator>}
    </SpaceBetween>
  );
}
