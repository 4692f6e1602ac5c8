import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import type { SideNavigationProps } from "@cloudscape-design/components/side-navigation";
import Spinner from "@cloudscape-design/components/spinner";
import { useQueryClient } from "@tanstack/react-query";
import { lazy, Suspense, useEffect, type ReactNode } from "react";
import { whenSignedOut } from "./api/client";
import { ErrorBoundary } from "./components/ErrorBoundary";
import { FlashProvider } from "./layout/flash";
import { Shell } from "./layout/Shell";
import { matchPath, navigate, usePath } from "./router";
import { HOME, NAV, ROUTES } from "./routes";
import { markSignedOut, PrincipalContext, useSession } from "./session";
import { NotFound } from "./pages/NotFound";

const SignIn = lazy(() => import("./pages/SignIn"));

export function App() {
  const session = useSession();
  const client = useQueryClient();
  useEffect(() => whenSignedOut(() => markSignedOut(client)), [client]);

  if (session.isPending) return <Centered><Spinner size="large" /></Centered>;
  if (session.isError) {
    return (
      <Centered>
        <Alert type="error" header="The control plane did not answer">
          {String(session.error)}
        </Alert>
      </Centered>
    );
  }
  if (!session.data) {
    return (
      <Suspense fallback={<Centered><Spinner size="large" /></Centered>}>
        <SignIn />
      </Suspense>
    );
  }
  return (
    <PrincipalContext.Provider value={session.data}>
      <FlashProvider>
        <Routed />
      </FlashProvider>
    </PrincipalContext.Provider>
  );
}

function Routed() {
  const path = usePath();
  useEffect(() => {
    if (path === "/") navigate(HOME, { replace: true });
  }, [path]);
  const found = findRoute(path);
  const Page = found?.route.page;
  return (
    <Shell route={found?.route} params={found?.params ?? {}} activeHref={activeNav(path)}>
      <ErrorBoundary key={path}>
        <Suspense fallback={<Spinner size="large" />}>
          {Page ? <Page params={found.params} /> : path === "/" ? null : <NotFound />}
        </Suspense>
      </ErrorBoundary>
    </Shell>
  );
}

function findRoute(path: string) {
  for (const route of ROUTES) {
    const params = matchPath(route.pattern, path);
    if (params) return { route, params };
  }
  return undefined;
}

/** The side-navigation entry that contains the current path ("/operations/x" -> "/operations"). */
function activeNav(path: string): string {
  const hrefs = (items: readonly SideNavigationProps.Item[]): string[] =>
    items.flatMap((item) => [
      ...("href" in item && item.href ? [item.href] : []),
      ...("items" in item ? hrefs(item.items) : []),
    ]);
  return hrefs(NAV).find((href) => path === href || path.startsWith(`${href}/`)) ?? path;
}

function Centered({ children }: { children: ReactNode }) {
  return (
    <Box padding={{ top: "xxxl" }} textAlign="center">
      {children}
    </Box>
  );
}
