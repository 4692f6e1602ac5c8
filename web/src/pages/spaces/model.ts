// Space shapes are the server's OpenAPI types (src/api/generated/); none is named by hand.
import type { Schemas } from "../../api/client";

export type Space = Schemas["SpaceView"];
export type SpaceRequest = Schemas["SpaceIn"];
export type Listing = Schemas["SpaceListing"];
export type Desired = Schemas["SpaceStateIn"]["desired"];
export type Template = Schemas["TemplateView"];
export type TemplateRequest = Schemas["TemplateIn"];

/** States a space is moving through (views.state_of on the server): poll them quickly. */
export const MOVING = new Set(["Starting", "Stopping"]);

export const spacesKey = (cluster: string) => ["spaces", cluster] as const;
export const spaceKey = (cluster: string, name: string) => ["space", cluster, name] as const;

export const spacesPath = (cluster: string) => `/clusters/${cluster}/spaces`;
export const spacePath = (cluster: string, name: string) => `${spacesPath(cluster)}/${name}`;
export const newSpacePath = (cluster: string) => `/clusters/${cluster}/new-space`;
export const templatesPath = (cluster: string) => `/clusters/${cluster}/space-templates`;
export const templatesKey = (cluster: string) => ["space-templates", cluster] as const;

/** "2 CPU, 8Gi, 1 GPU": what the space asks of its node. */
export function resourcesText(s: Pick<Space, "cpu" | "memory" | "gpus">): string {
  const parts = [`${s.cpu ?? "-"} CPU`, s.memory ?? "-"];
  if (s.gpus) parts.push(`${s.gpus} GPU`);
  return parts.join(", ");
}
