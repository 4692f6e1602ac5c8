// The New space form without its page: its values, what is wrong with them (checked here with
// the server's own patterns and bounds, src/api/generated/rules.ts) and the body it sends.
import { RULES, SPACE_IN } from "../../api/generated/rules";
import type { SpaceRequest } from "./model";

export interface SpaceForm {
  name: string;
  group: string;
  template: string;
  cpu: string;
  memory: string;
  gpus: string;
  storage: string;
  idle: string;
}

const D = SPACE_IN.default;
// CPU, memory, home and idle stop left empty take the template's defaults, else the server's
// (1, 4Gi, 20 GiB, 60 minutes): the placeholders show which.
export const EMPTY: SpaceForm = {
  name: "", group: "", template: "", cpu: "", memory: "",
  gpus: String(D.gpus), storage: "", idle: "",
};

type Bounded = keyof typeof SPACE_IN.maximum;

function whole(text: string, field: Bounded): string | undefined {
  if (text.trim() === "" && field !== "gpus") return undefined;
  const n = Number(text);
  const [lo, hi] = [SPACE_IN.minimum[field], SPACE_IN.maximum[field]];
  return text.trim() !== "" && Number.isInteger(n) && n >= lo && n <= hi ? undefined : `A whole number from ${lo} to ${hi}.`;
}

/** Messages per request field (the keys a 422 names too); empty when the form may be sent.
 * An empty name is not an error yet: the button waits for one. */
export function problems(f: SpaceForm): Partial<Record<keyof SpaceRequest, string>> {
  const out: Partial<Record<keyof SpaceRequest, string>> = {};
  const name = f.name.trim();
  if (name && !(RULES.spaceName.test(name) && name.length <= SPACE_IN.maxLength.name))
    out.name = `1-${SPACE_IN.maxLength.name} lowercase letters, digits or '-', starting and ending with a letter or digit.`;
  if (f.cpu.trim() && !RULES.spaceCpu.test(f.cpu.trim())) out.cpu = "A CPU quantity: 2, 0.5 or 500m.";
  if (f.memory.trim() && !RULES.spaceMemory.test(f.memory.trim())) out.memory = "A memory quantity in Mi or Gi: 4Gi.";
  out.gpus = whole(f.gpus, "gpus");
  out.storage_gib = whole(f.storage, "storage_gib");
  out.idle_minutes = whole(f.idle, "idle_minutes");
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v)) as typeof out;
}

/** The create body: the name, and only what was filled in (the rest: the template's). */
export function spaceBody(f: SpaceForm): SpaceRequest {
  const body: SpaceRequest = { name: f.name.trim() };
  if (f.group) body.instance_group = f.group;
  if (f.template) body.template = f.template;
  if (f.cpu.trim()) body.cpu = f.cpu.trim();
  if (f.memory.trim()) body.memory = f.memory.trim();
  if (Number(f.gpus) !== D.gpus) body.gpus = Number(f.gpus);
  if (f.storage.trim()) body.storage_gib = Number(f.storage);
  if (f.idle.trim()) body.idle_minutes = Number(f.idle);
  return body;
}
