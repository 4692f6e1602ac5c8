// Endpoint shapes are the server's OpenAPI types (src/api/generated/); none is named by hand.
import type { Schemas } from "../../api/client";

export type EndpointRow = Schemas["EndpointSummaryOut"];
export type Endpoint = Schemas["EndpointOut"];
export type EndpointRequest = Schemas["EndpointIn"];
export type EndpointPatch = Schemas["EndpointPatchIn"];
export type Invoked = Schemas["InvokeOut"];

export const endpointsKey = (cluster: string) => ["endpoints", cluster] as const;
export const endpointKey = (cluster: string, name: string) => ["endpoint", cluster, name] as const;

export const endpointsPath = (cluster: string) => `/clusters/${cluster}/endpoints`;
export const endpointPath = (cluster: string, name: string) => `${endpointsPath(cluster)}/${name}`;

/** The answer's text: a completion's `text`, or a chat reply's message content. */
export function answerText(answer: Invoked): string {
  const choices = answer.response.choices as { text?: string; message?: { content?: string } }[] | undefined;
  const first = choices?.[0];
  return first?.text ?? first?.message?.content ?? "";
}
