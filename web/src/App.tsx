// The entry: decides between the sign-in page and the console, and starts fetching the code
// of the console frame and of the current page at once, in parallel. It uses no Cloudscape
// component itself, so the first script the page loads stays small (docs/console.md).
import { useQueryClient } from "@tanstack/react-query";
import { lazy, Suspense, useEffect, type ReactNode } from "react";
import { whenSignedOut } from "./api/client";
import { findRoute, HOME } from "./routes";
import { markSignedOut, PrincipalContext, useSession } from "./session";

const loadConsole = () => import("./layout/Console");
const Console = lazy(loadConsole);
const SignIn = lazy(() => import("./pages/SignIn"));

export function App() {
  const session = useSession();
  const client = useQueryClient();
  useEffect(() => whenSignedOut(() => markSignedOut(client)), [client]);

  if (session.isPending) return <Centered>Loading…</Centered>;
  if (session.isError) {
    return <Centered role="alert">The control plane did not answer: {String(session.error)}</Centered>;
  }
  if (!session.data) {
    return (
      <Suspense fallback={<Centered>Loading…</Centered>}>
        <SignIn />
      </Suspense>
    );
  }
  preload(location.pathname);
  return (
    <PrincipalContext.Provider value={session.data}>
      <Suspense fallback={<Centered>Loading…</Centered>}>
        <Console />
      </Suspense>
    </PrincipalContext.Provider>
  );
}

/** Start loading the frame and the page together instead of one after the other. */
function preload(path: string): void {
  void loadConsole();
  void findRoute(path === "/" ? HOME : path)?.route.load();
}

function Centered({ children, role }: { children: ReactNode; role?: string }) {
  return (
    <div role={role} style={{ padding: "96px 24px", textAlign: "center", font: "14px sans-serif", color: "#5f6b7a" }}>
      {children}
    </div>
  );
}
