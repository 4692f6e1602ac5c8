// The signed-in console: the frame (navigation, breadcrumbs, notifications) around the page
// the URL names. Loaded lazily, so the sign-in page does not pay for it.
import type { SideNavigationProps } from "@cloudscape-design/components/side-navigation";
import Spinner from "@cloudscape-design/components/spinner";
import { Suspense, useEffect } from "react";
import { ErrorBoundary } from "../components/ErrorBoundary";
import { NotFound } from "../pages/NotFound";
import { navigate, usePath } from "../router";
import { findRoute, HOME, NAV } from "../routes";
import { FlashProvider } from "./flash";
import { Shell } from "./Shell";

export default function Console() {
  return (
    <FlashProvider>
      <Routed />
    </FlashProvider>
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

/** The side-navigation entry that contains the current path ("/operations/x" -> "/operations"). */
function activeNav(path: string): string {
  const hrefs = (items: readonly SideNavigationProps.Item[]): string[] =>
    items.flatMap((item) => [
      ...("href" in item && item.href ? [item.href] : []),
      ...("items" in item ? hrefs(item.items) : []),
    ]);
  return hrefs(NAV).find((href) => path === href || path.startsWith(`${href}/`)) ?? path;
}
