// Group and node changes answer 202 with the operation, or 200 when nothing needs to change.
import { unwrap, type Schemas } from "../../api/client";

/** What a change answers: the operation (202), or no change / the dry-run plan (200). */
export type Change = Schemas["MutationOut"] | Schemas["NoChangeOut"];

/** Runs a change; returns the operation id, or null when the server found nothing to do. */
export async function startChange(call: Promise<{ data?: unknown; error?: unknown; response: Response }>): Promise<string | null> {
  const answer = (await unwrap(call)) as Change;
  return "id" in answer ? answer.id : null;
}

/** A fresh idempotency key for one user action (a retry of the same click reuses it). */
export function newKey(): string {
  return crypto.randomUUID();
}
