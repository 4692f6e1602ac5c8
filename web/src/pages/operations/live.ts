// Live updates for one operation: the server's WebSocket sends the operation on every change
// and closes once it is terminal. If the socket drops while the operation still runs (a
// server restart, say), the page reads the operation again and reconnects with backoff.
import { useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import { api, unwrap } from "../../api/client";
import { markSignedOut } from "../../session";
import { isTerminal, type Operation } from "./model";

export function operationKey(id: string) {
  return ["operation", id] as const;
}

export function fetchOperation(id: string): Promise<Operation> {
  return unwrap(api.GET("/api/v1/operations/{op_id}", { params: { path: { op_id: id } } }));
}

/** connecting: first contact; reconnecting: the socket dropped while the operation runs. */
export type LiveState = "live" | "connecting" | "reconnecting" | "idle";

export function useLiveOperation(id: string, op: Operation | undefined): LiveState {
  const client = useQueryClient();
  const [state, setState] = useState<LiveState>("idle");
  const active = op !== undefined && !isTerminal(op);

  useEffect(() => {
    if (!active) {
      setState("idle");
      return;
    }
    let stopped = false;
    let socket: WebSocket | undefined;
    let timer: number | undefined;
    let dropped = false;
    const connect = (attempt: number) => {
      setState(dropped ? "reconnecting" : "connecting");
      const scheme = location.protocol === "https:" ? "wss" : "ws";
      socket = new WebSocket(`${scheme}://${location.host}/api/v1/operations/${encodeURIComponent(id)}/events`);
      socket.onopen = () => setState("live");
      socket.onmessage = (event) => {
        attempt = 0;
        client.setQueryData(operationKey(id), JSON.parse(String(event.data)) as Operation);
        void client.invalidateQueries({ queryKey: ["operations"] });
      };
      socket.onclose = (event) => {
        if (stopped) return;
        if (event.code === 4401) return markSignedOut(client);
        void client.invalidateQueries({ queryKey: operationKey(id) });
        if (event.code === 4403 || event.code === 4404) return setState("idle");
        dropped = true;
        setState("reconnecting");
        timer = window.setTimeout(() => connect(attempt + 1), Math.min(10_000, 500 * 2 ** attempt));
      };
    };
    connect(0);
    return () => {
      stopped = true;
      window.clearTimeout(timer);
      socket?.close();
    };
  }, [id, active, client]);

  return state;
}

/** The current time, ticking every second while `running` (for elapsed times). */
export function useNow(running: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!running) return;
    const timer = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(timer);
  }, [running]);
  return running ? now : Date.now();
}
