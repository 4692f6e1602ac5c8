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

/** The answer's text: a completion's `text`, a chat reply's message content, or the LMI
 * container's `generated_text` (a JumpStart endpoint, docs/inference.md). */
export function answerText(answer: Invoked): string {
  const choices = answer.response.choices as { text?: string; message?: { content?: string } }[] | undefined;
  const first = choices?.[0];
  return first?.text ?? first?.message?.content ?? (answer.response.generated_text as string | undefined) ?? "";
}

/** Tokens counted: OpenAI's `usage`, or the LMI container's `details.generated_tokens`. */
export function answerTokens(answer: Invoked): { prompt?: number; completion?: number } {
  const usage = answer.response.usage as { prompt_tokens?: number; completion_tokens?: number } | undefined;
  const details = answer.response.details as { generated_tokens?: number } | undefined;
  return { prompt: usage?.prompt_tokens, completion: usage?.completion_tokens ?? details?.generated_tokens };
}
