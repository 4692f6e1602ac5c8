// Every page of the console, in one table. A new page (clusters, instance groups, nodes) is one
// entry here plus, if it belongs in the side navigation, one entry in NAV; the server serves
// the console for the path prefixes listed in src/podplane/web/pages.py.
import type { AppLayoutProps } from "@cloudscape-design/components/app-layout";
import type { BreadcrumbGroupProps } from "@cloudscape-design/components/breadcrumb-group";
import type { SideNavigationProps } from "@cloudscape-design/components/side-navigation";
import { lazy, type ComponentType, type LazyExoticComponent } from "react";
import { ENDPOINT_ROUTES } from "./pages/endpoints/routes";
import { JOB_ROUTES } from "./pages/jobs/routes";
import { POOL_ROUTES } from "./pages/pools/routes";
import { SPACE_ROUTES } from "./pages/spaces/routes";
import type { Action } from "./permissions";
import { matchPath } from "./router";

export interface PageProps {
  params: Record<string, string>;
}

export interface RouteDef {
  pattern: string;
  /** Fetches the page's code; called early so it loads alongside the console frame. */
  load: () => Promise<{ default: ComponentType<PageProps> }>;
  page: LazyExoticComponent<ComponentType<PageProps>>;
  crumbs: (params: Record<string, string>) => BreadcrumbGroupProps.Item[];
  contentType?: AppLayoutProps.ContentType;
}

export const HOME = "/operations";

function page(load: RouteDef["load"]): Pick<RouteDef, "load" | "page"> {
  return { load, page: lazy(load) };
}

export const ROUTES: RouteDef[] = [
  {
    pattern: "/clusters",
    ...page(() => import("./pages/clusters/ClustersList")),
    crumbs: () => [{ text: "Clusters", href: "/clusters" }],
    contentType: "table",
  },
  {
    pattern: "/create-cluster",
    ...page(() => import("./pages/clusters/CreateCluster")),
    crumbs: () => [
      { text: "Clusters", href: "/clusters" },
      { text: "Create cluster", href: "/create-cluster" },
    ],
    contentType: "wizard",
  },
  {
    pattern: "/clusters/:cluster",
    ...page(() => import("./pages/clusters/ClusterDetail")),
    crumbs: (p) => [
      { text: "Clusters", href: "/clusters" },
      { text: p.cluster, href: `/clusters/${p.cluster}` },
    ],
  },
  ...JOB_ROUTES,
  ...ENDPOINT_ROUTES,
  ...POOL_ROUTES,
  ...SPACE_ROUTES,
  {
    pattern: "/operations",
    ...page(() => import("./pages/operations/OperationsList")),
    crumbs: () => [{ text: "Operations", href: "/operations" }],
    contentType: "table",
  },
  {
    pattern: "/operations/:id",
    ...page(() => import("./pages/operations/OperationDetail")),
    crumbs: (p) => [
      { text: "Operations", href: "/operations" },
      { text: p.id, href: `/operations/${p.id}` },
    ],
  },
  {
    pattern: "/audit",
    ...page(() => import("./pages/Audit")),
    crumbs: () => [{ text: "Audit log", href: "/audit" }],
    contentType: "table",
  },
  {
    pattern: "/tokens",
    ...page(() => import("./pages/Tokens")),
    crumbs: () => [{ text: "Tokens", href: "/tokens" }],
    contentType: "table",
  },
];

export function findRoute(path: string): { route: RouteDef; params: Record<string, string> } | undefined {
  for (const route of ROUTES) {
    const params = matchPath(route.pattern, path);
    if (params) return { route, params };
  }
  return undefined;
}

/** Navigation entries a role may lack: they stay, marked with the role they need. */
export const NAV_NEEDS: Record<string, Action> = { "/tokens": "token.list" };

export const NAV: SideNavigationProps.Item[] = [
  { type: "link", text: "Clusters", href: "/clusters" },
  { type: "link", text: "Operations", href: "/operations" },
  { type: "link", text: "Audit log", href: "/audit" },
  { type: "divider" },
  {
    type: "section",
    text: "Administration",
    items: [{ type: "link", text: "Tokens", href: "/tokens" }],
  },
];
