// The warm pool and model pages of a cluster, spread into ROUTES (src/routes.tsx). The create
// page is not under /pools/ so that no pool name can shadow it.
import { lazy } from "react";
import type { RouteDef } from "../../routes";

function page(load: RouteDef["load"]): Pick<RouteDef, "load" | "page"> {
  return { load, page: lazy(load) };
}

const crumbs = (cluster: string, text: string, path: string) => [
  { text: "Clusters", href: "/clusters" },
  { text: cluster, href: `/clusters/${cluster}` },
  { text: "Endpoints", href: `/clusters/${cluster}/endpoints` },
  { text, href: `/clusters/${cluster}/${path}` },
];

export const POOL_ROUTES: RouteDef[] = [
  {
    pattern: "/clusters/:cluster/pools",
    ...page(() => import("./PoolsList")),
    crumbs: (p) => crumbs(p.cluster, "Warm pools", "pools"),
    contentType: "table",
  },
  {
    pattern: "/clusters/:cluster/create-pool",
    ...page(() => import("./CreatePool")),
    crumbs: (p) => [...crumbs(p.cluster, "Warm pools", "pools"), { text: "Create", href: `/clusters/${p.cluster}/create-pool` }],
    contentType: "form",
  },
  {
    pattern: "/clusters/:cluster/pools/:pool",
    ...page(() => import("./PoolDetail")),
    crumbs: (p) => [...crumbs(p.cluster, "Warm pools", "pools"), { text: p.pool, href: `/clusters/${p.cluster}/pools/${p.pool}` }],
  },
  {
    pattern: "/clusters/:cluster/models",
    ...page(() => import("../models/ModelsPage")),
    crumbs: (p) => crumbs(p.cluster, "Models", "models"),
  },
];
