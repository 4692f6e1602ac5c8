// The Jobs pages of a cluster, spread into ROUTES (src/routes.tsx). The submit page is not under
// /jobs/ so that no job name can shadow it.
import { lazy } from "react";
import type { RouteDef } from "../../routes";

function page(load: RouteDef["load"]): Pick<RouteDef, "load" | "page"> {
  return { load, page: lazy(load) };
}

const crumbs = (cluster: string) => [
  { text: "Clusters", href: "/clusters" },
  { text: cluster, href: `/clusters/${cluster}` },
  { text: "Jobs", href: `/clusters/${cluster}/jobs` },
];

export const JOB_ROUTES: RouteDef[] = [
  {
    pattern: "/clusters/:cluster/jobs",
    ...page(() => import("./JobsList")),
    crumbs: (p) => crumbs(p.cluster),
    contentType: "table",
  },
  {
    pattern: "/clusters/:cluster/submit-job",
    ...page(() => import("./SubmitJob")),
    crumbs: (p) => [...crumbs(p.cluster), { text: "Submit job", href: `/clusters/${p.cluster}/submit-job` }],
    contentType: "form",
  },
  {
    pattern: "/clusters/:cluster/jobs/:job",
    ...page(() => import("./JobDetail")),
    crumbs: (p) => [...crumbs(p.cluster), { text: p.job, href: `/clusters/${p.cluster}/jobs/${p.job}` }],
  },
];
