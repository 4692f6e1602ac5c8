// Who is signed in. The server embeds the current session in the page it serves, so the
// first paint needs no request (and no 401 when nobody is signed in yet).
import { createContext, useContext } from "react";
import { useQuery, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { api, unwrap, type Schemas } from "./api/client";

export type Whoami = Schemas["Whoami"];
export type Role = "viewer" | "operator" | "admin";

const SESSION_KEY = ["session"] as const;

interface Boot {
  session: Whoami | null;
}

function bootData(): Boot | undefined {
  const el = document.getElementById("podplane-boot");
  if (!el?.textContent) return undefined;
  try {
    return JSON.parse(el.textContent) as Boot;
  } catch {
    return undefined;
  }
}

const boot = bootData();

async function fetchWhoami(): Promise<Whoami | null> {
  const { data, response } = await api.GET("/api/v1/session");
  if (response.status === 401) return null;
  if (!response.ok || !data) throw new Error(`session check failed: ${response.status}`);
  return data;
}

export function useSession() {
  return useQuery({
    queryKey: SESSION_KEY,
    queryFn: fetchWhoami,
    initialData: boot ? boot.session : undefined,
    staleTime: Infinity,
  });
}

/** The signed-in principal, as the app shell rendered it (set below the sign-in gate). */
export const PrincipalContext = createContext<Whoami>({ name: "", role: "viewer", face: "ui" });

export function usePrincipal(): Whoami {
  return useContext(PrincipalContext);
}

export function useSignIn() {
  const client = useQueryClient();
  return async (token: string): Promise<Whoami> => {
    const who = await unwrap(api.POST("/api/v1/session", { body: { token } }));
    dropOtherData(client);
    client.setQueryData(SESSION_KEY, who);
    return who;
  };
}

export function useSignOut() {
  const client = useQueryClient();
  return async (): Promise<void> => {
    await unwrap(api.DELETE("/api/v1/session"));
    markSignedOut(client);
  };
}

/** Back to the sign-in page. Pages unmount, so nothing refetches as the next principal. */
export function markSignedOut(client: QueryClient): void {
  client.setQueryData(SESSION_KEY, null);
}

/**
 * Forget everything read under the previous principal, before the new one's pages mount
 * (the session query itself stays: the app observes it).
 */
function dropOtherData(client: QueryClient): void {
  client.removeQueries({ predicate: (q) => q.queryKey[0] !== SESSION_KEY[0] });
}
