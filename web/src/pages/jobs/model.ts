// Job shapes are the server's OpenAPI types (src/api/generated/); none is named by hand here.
import type { Schemas } from "../../api/client";
import { ApiError } from "../../api/problem";

export type JobRow = Schemas["JobListItemOut"];
export type Job = Schemas["JobOut"];
export type Recipe = Schemas["RecipeOut"];
export type RecipeParam = Schemas["ParamOut"];
export type JobEvent = Schemas["EventOut"];
export type JobRequest = Schemas["JobIn"];
export type JobKind = Schemas["Container"]["kind"];

/** Statuses after which a job changes no more (views.DONE on the server). */
export const DONE = new Set(["Succeeded", "Failed", "Cancelled"]);

export const jobsKey = (cluster: string) => ["jobs", cluster] as const;
export const jobKey = (cluster: string, job: string) => ["job", cluster, job] as const;

export const jobsPath = (cluster: string) => `/clusters/${cluster}/jobs`;
export const jobPath = (cluster: string, job: string) => `${jobsPath(cluster)}/${job}`;

/** "1 of 2": restarts spent of the restart budget. */
export function restartsText(r: Schemas["BudgetOut"]): string {
  return `${r.spent} of ${r.budget}`;
}

/** The raw problem body of a refused call: `field` (a service refusal, "params.epochs") or
 * `errors[].loc` (request validation, ["body", "params", "epochs"]) name what was wrong. */
export interface FieldProblem {
  detail: string;
  field?: string;
  errors?: { loc: string[]; msg: string }[];
}

/** Messages per form field ("name", "params.epochs", ...) from a 422 answer's body. */
export function fieldErrors(body: FieldProblem | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!body) return out;
  if (body.field) out[body.field] = body.detail;
  for (const e of body.errors ?? []) {
    const where = e.loc.slice(e.loc[0] === "body" ? 1 : 0).join(".");
    if (where && !out[where]) out[where] = e.msg;
  }
  return out;
}

/** A refused call as the ApiError the console shows, with the body kept for field messages. */
export class SubmitError extends ApiError {
  readonly body: FieldProblem | undefined;

  constructor(error: ApiError, body: FieldProblem | undefined) {
    super(error.problem);
    this.body = body;
  }
}

/** A form value as the recipe's type; text that is not a number is sent as typed, so the
 * server's 422 names the field. */
export function typed(param: RecipeParam, text: string): string | number | boolean {
  if (param.type === "bool") return text === "true";
  if (param.type === "int" || param.type === "float") {
    const n = Number(text);
    return text.trim() !== "" && Number.isFinite(n) ? n : text;
  }
  return text;
}

/** Only the parameters the user changed (the server applies the recipe's defaults). */
export function changedParams(recipe: Recipe, values: Record<string, string>): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const p of recipe.params) {
    const text = values[p.name];
    if (text !== undefined && text !== String(p.default)) out[p.name] = typed(p, text);
  }
  return out;
}

/** "5m", "2h 03m", "3d": how long ago a timestamp was. */
export function age(created: string | null | undefined, now: number): string {
  if (!created) return "-";
  const s = Math.max(0, Math.floor((now - Date.parse(created)) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
  return `${Math.floor(s / 86400)}d`;
}

/** Non-empty lines of a text area, as typed (one argv word each). */
export function lines(text: string): string[] {
  return text.split(/\r?\n/).filter((line) => line.trim() !== "");
}

/** NAME=value lines as an environment; a line without `=` is a name with an empty value. */
export function envOf(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of lines(text)) {
    const at = line.indexOf("=");
    if (at < 0) out[line.trim()] = "";
    else out[line.slice(0, at).trim()] = line.slice(at + 1);
  }
  return out;
}

/** The message of the first refused field under `prefix` ("container.env" names the variable). */
export function firstError(errors: Record<string, string>, prefix: string): string | undefined {
  const key = Object.keys(errors).find((k) => k === prefix || k.startsWith(`${prefix}.`));
  return key === undefined ? undefined : errors[key];
}
