// Live logs of every pod of a job over one WebSocket (…/logs/stream). The page keeps at most
// MAX_LINES lines in the DOM (the oldest drop off); when the stream ends while the job still
// runs (pods not started yet, a restart), it reconnects with the cursor it has, so no line
// comes twice.
import Box from "@cloudscape-design/components/box";
import Container from "@cloudscape-design/components/container";
import Header from "@cloudscape-design/components/header";
import SpaceBetween from "@cloudscape-design/components/space-between";
import StatusIndicator from "@cloudscape-design/components/status-indicator";
import Toggle from "@cloudscape-design/components/toggle";
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useLayoutEffect, useRef, useState } from "react";
import { markSignedOut } from "../../session";

export const MAX_LINES = 2000;
const RETRY_MS = 2000;

type Line = [pod: string, text: string];
type Message =
  | { type: "lines"; lines: Line[]; cursor: Record<string, number> }
  | { type: "note"; pod: string; message: string }
  | { type: "end"; cursor: Record<string, number> };

type State = "connecting" | "live" | "waiting" | "ended" | "refused";

interface Props {
  cluster: string;
  job: string;
  running: boolean;
}

/** The lines kept: the newest `cap` of what arrived. */
export function keep(old: Line[], fresh: Line[], cap: number): Line[] {
  const all = old.length + fresh.length > cap ? [...old, ...fresh].slice(-cap) : [...old, ...fresh];
  return all;
}

function useLogStream(cluster: string, job: string, running: boolean) {
  const client = useQueryClient();
  const [lines, setLines] = useState<Line[]>([]);
  const [received, setReceived] = useState(0);
  const [notes, setNotes] = useState<Record<string, string>>({});
  const [state, setState] = useState<State>("connecting");
  const cursor = useRef<Record<string, number>>({});
  const runningRef = useRef(running);
  runningRef.current = running;

  useEffect(() => {
    let stopped = false;
    let socket: WebSocket | undefined;
    let timer: number | undefined;
    const connect = () => {
      setState("connecting");
      const scheme = location.protocol === "https:" ? "wss" : "ws";
      const resume = encodeURIComponent(JSON.stringify(cursor.current));
      const base = `/api/v1/clusters/${encodeURIComponent(cluster)}/jobs/${encodeURIComponent(job)}/logs/stream`;
      socket = new WebSocket(`${scheme}://${location.host}${base}?follow=true&resume=${resume}`);
      socket.onopen = () => setState("live");
      socket.onmessage = (event) => {
        const m = JSON.parse(String(event.data)) as Message;
        if (m.type === "lines") {
          cursor.current = { ...cursor.current, ...m.cursor };
          setLines((old) => keep(old, m.lines, MAX_LINES));
          setReceived((n) => n + m.lines.length);
        } else if (m.type === "note") {
          setNotes((old) => ({ ...old, [m.pod]: m.message }));
        } else {
          cursor.current = { ...cursor.current, ...m.cursor };
        }
      };
      socket.onclose = (event) => {
        if (stopped) return;
        if (event.code === 4401) return markSignedOut(client);
        if (event.code >= 4400) return setState("refused");
        // the job's pods may not exist yet, or were replaced: read again while it runs
        if (runningRef.current) {
          setState("waiting");
          timer = window.setTimeout(connect, RETRY_MS);
        } else setState("ended");
      };
    };
    connect();
    return () => {
      stopped = true;
      window.clearTimeout(timer);
      socket?.close();
    };
  }, [cluster, job, client]);
  return { lines, received, notes, state };
}

const STATES: Record<State, [string, "in-progress" | "loading" | "pending" | "stopped" | "error"]> = {
  connecting: ["Connecting", "loading"],
  live: ["Live", "in-progress"],
  waiting: ["Waiting for pods", "pending"],
  ended: ["Ended", "stopped"],
  refused: ["Refused", "error"],
};

export function JobLogs({ cluster, job, running }: Props) {
  const { lines, received, notes, state } = useLogStream(cluster, job, running);
  const [follow, setFollow] = useState(true);
  const box = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    if (follow && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [lines, follow]);
  const [label, type] = STATES[state];
  return (
    <Container
      header={
        <Header
          variant="h2"
          description={`Every pod, one stream; the newest ${MAX_LINES} lines are kept on the page.`}
          info={<StatusIndicator type={type}><span data-testid="logs-state">{label}</span></StatusIndicator>}
          actions={
            <Toggle checked={follow} onChange={(e) => setFollow(e.detail.checked)}>
              Follow
            </Toggle>
          }
        >
          Logs
        </Header>
      }
    >
      <SpaceBetween size="s">
        {Object.entries(notes).map(([pod, message]) => (
          <Box key={pod} variant="small" color="text-status-inactive">
            {pod}: {message}
          </Box>
        ))}
        <div
          ref={box}
          data-testid="job-logs"
          style={{ maxHeight: 420, overflow: "auto", fontFamily: "monospace", fontSize: 12, whiteSpace: "pre-wrap", wordBreak: "break-all" }}
        >
          {lines.map(([pod, text], i) => (
            <div key={received - lines.length + i} data-testid="log-line">
              <span style={{ color: "#5f6b7a" }}>{pod} </span>
              {text}
            </div>
          ))}
        </div>
        <Box variant="small" color="text-body-secondary">
          <span data-testid="logs-count">{received}</span> line(s) received{received > lines.length ? `, the last ${lines.length} shown` : ""}.
        </Box>
      </SpaceBetween>
    </Container>
  );
}
