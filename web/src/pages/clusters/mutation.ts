// Group and node changes answer 202 with the operation, or 200 when nothing needs to change.
import { unwrap } from "../../api/client";

export interface Answer {
  id?: string;
  changed?: boolean;
}

/** Runs a change; returns the operation id, or null when the server found nothing to do. */
export async function startChange(call: Promise<{ data?: unknown; error?: unknown; response: Response }>): Promise<string | null> {
  const answer = (await unwrap(call)) as Answer;
  return answer.id ?? null;
}

/** A fresh idempotency key for one user action (a retry of the same click reuses it). */
export function newKey(): string {
  return crypto.randomUUID();
}
