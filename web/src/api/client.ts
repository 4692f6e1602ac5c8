// The one REST client of the console. Its types are generated from the server's OpenAPI
// document at build time (src/api/generated/schema.d.ts), so a changed API breaks the build
// instead of drifting silently.
import createClient, { type Middleware } from "openapi-fetch";
import type { components, paths } from "./generated/schema";
import { ApiError, toProblem } from "./problem";

export type Schemas = components["schemas"];

export const api = createClient<paths>({ baseUrl: "", credentials: "same-origin" });

let onSignedOut: () => void = () => {};

/** Called by the app: a 401 on any call means the session ended (expired or revoked). */
export function whenSignedOut(handler: () => void): void {
  onSignedOut = handler;
}

const sessionWatch: Middleware = {
  onResponse({ request, response }) {
    if (response.status === 401 && !new URL(request.url).pathname.endsWith("/session")) {
      onSignedOut();
    }
    return undefined;
  },
};
api.use(sessionWatch);

interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The data of a call, or an ApiError carrying the server's problem+json. */
export async function unwrap<T>(call: Promise<FetchResult<T>>): Promise<T> {
  const { data, error, response } = await call;
  if (!response.ok) throw new ApiError(toProblem(error, response));
  return data as T;
}
