// The cluster page's way to its Endpoints pages.
import Link from "@cloudscape-design/components/link";
import { followHandler } from "../../router";
import { endpointsPath } from "./model";

export function EndpointsLink({ cluster }: { cluster: string }) {
  return (
    <Link href={endpointsPath(cluster)} onFollow={followHandler} data-testid="endpoints-link">
      Inference endpoints
    </Link>
  );
}
