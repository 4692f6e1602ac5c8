// The cluster page's way to its Spaces pages.
import Link from "@cloudscape-design/components/link";
import { followHandler } from "../../router";
import { spacesPath } from "./model";

export function SpacesLink({ cluster }: { cluster: string }) {
  return (
    <Link href={spacesPath(cluster)} onFollow={followHandler} data-testid="spaces-link">
      Dev spaces
    </Link>
  );
}
