// Errors from the API are application/problem+json with a stable `code` and often a `hint`.

export interface Problem {
  status: number;
  code: string;
  title: string;
  detail: string;
  hint?: string;
}

export class ApiError extends Error {
  readonly problem: Problem;

  constructor(problem: Problem) {
    super(problem.detail);
    this.problem = problem;
  }
}

export function toProblem(body: unknown, response: Response): Problem {
  const b = (typeof body === "object" && body !== null ? body : {}) as Partial<Problem>;
  return {
    status: b.status ?? response.status,
    code: b.code ?? `http_${response.status}`,
    title: b.title ?? response.statusText ?? "Request failed",
    detail: b.detail ?? `The server answered ${response.status}.`,
    hint: b.hint,
  };
}

/** Any thrown value as a Problem, for display. */
export function problemOf(err: unknown): Problem {
  if (err instanceof ApiError) return err.problem;
  const message = err instanceof Error ? err.message : String(err);
  return { status: 0, code: "network_error", title: "No answer", detail: message };
}
