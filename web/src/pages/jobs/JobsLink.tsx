// The cluster page's way to its Jobs pages.
import Link from "@cloudscape-design/components/link";
import { followHandler } from "../../router";
import { jobsPath } from "./model";

export function JobsLink({ cluster }: { cluster: string }) {
  return (
    <Link href={jobsPath(cluster)} onFollow={followHandler} data-testid="jobs-link">
      Training jobs
    </Link>
  );
}
