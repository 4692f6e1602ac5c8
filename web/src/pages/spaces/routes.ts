// The Spaces pages of a cluster, spread into ROUTES (src/routes.tsx). The create page is not
// under /spaces/ so that no space name can shadow it.
import { lazy } from "react";
import type { RouteDef } from "../../routes";

function page(load: RouteDef["load"]): Pick<RouteDef, "load" | "page"> {
  return { load, page: lazy(load) };
}

const crumbs = (cluster: string) => [
  { text: "Clusters", href: "/clusters" },
  { text: cluster, href: `/clusters/${cluster}` },
  { text: "Spaces", href: `/clusters/${cluster}/spaces` },
];

export const SPACE_ROUTES: RouteDef[] = [
  {
    pattern: "/clusters/:cluster/spaces",
    ...page(() => import("./SpacesList")),
    crumbs: (p) => crumbs(p.cluster),
    contentType: "table",
  },
  {
    pattern: "/clusters/:cluster/new-space",
    ...page(() => import("./NewSpace")),
    crumbs: (p) => [...crumbs(p.cluster), { text: "New space", href: `/clusters/${p.cluster}/new-space` }],
    contentType: "form",
  },
  {
    pattern: "/clusters/:cluster/space-templates",
    ...page(() => import("./SpaceTemplates")),
    crumbs: (p) => [...crumbs(p.cluster), { text: "Templates", href: `/clusters/${p.cluster}/space-templates` }],
    contentType: "table",
  },
  {
    pattern: "/clusters/:cluster/spaces/:space",
    ...page(() => import("./SpaceDetail")),
    crumbs: (p) => [...crumbs(p.cluster), { text: p.space, href: `/clusters/${p.cluster}/spaces/${p.space}` }],
  },
];
