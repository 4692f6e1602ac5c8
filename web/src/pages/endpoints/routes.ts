// The Endpoints pages of a cluster, spread into ROUTES (src/routes.tsx). The deploy page is not
// under /endpoints/ so that no endpoint name can shadow it.
import { lazy } from "react";
import type { RouteDef } from "../../routes";

function page(load: RouteDef["load"]): Pick<RouteDef, "load" | "page"> {
  return { load, page: lazy(load) };
}

const crumbs = (cluster: string) => [
  { text: "Clusters", href: "/clusters" },
  { text: cluster, href: `/clusters/${cluster}` },
  { text: "Endpoints", href: `/clusters/${cluster}/endpoints` },
];

export const ENDPOINT_ROUTES: RouteDef[] = [
  {
    pattern: "/clusters/:cluster/endpoints",
    ...page(() => import("./EndpointsList")),
    crumbs: (p) => crumbs(p.cluster),
    contentType: "table",
  },
  {
    pattern: "/clusters/:cluster/deploy-endpoint",
    ...page(() => import("./DeployEndpoint")),
    crumbs: (p) => [...crumbs(p.cluster), { text: "Deploy", href: `/clusters/${p.cluster}/deploy-endpoint` }],
    contentType: "form",
  },
  {
    pattern: "/clusters/:cluster/endpoints/:endpoint",
    ...page(() => import("./EndpointDetail")),
    crumbs: (p) => [...crumbs(p.cluster), { text: p.endpoint, href: `/clusters/${p.cluster}/endpoints/${p.endpoint}` }],
  },
];
