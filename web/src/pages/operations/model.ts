// Reading an operation (docs/operations.md): which step is current, which one may be retried.
import type { Schemas } from "../../api/client";
import { parseTime } from "../../components/Time";

export type Operation = Schemas["OperationOut"];
export type Step = Schemas["StepOut"];

export const STATUSES = ["pending", "running", "succeeded", "failed", "cancelled"] as const;

export function isTerminal(op: Pick<Operation, "status">): boolean {
  return op.status === "succeeded" || op.status === "failed" || op.status === "cancelled";
}

/** The step the operation is at: the first one that has not succeeded. */
export function currentStep(op: Operation): Step | undefined {
  return op.steps.find((s) => s.status !== "succeeded");
}

/** The engine retries from the first unfinished step of a failed or cancelled operation. */
export function retryableStep(op: Operation): Step | undefined {
  if (op.status !== "failed" && op.status !== "cancelled") return undefined;
  return currentStep(op);
}

/** Milliseconds a step or operation has run: to its end, or to `now` while it runs. */
export function elapsedMs(startedAt: string | null | undefined, endedAt: string | null | undefined, now: number): number | undefined {
  if (!startedAt) return undefined;
  const end = endedAt ? parseTime(endedAt).getTime() : now;
  return end - parseTime(startedAt).getTime();
}
