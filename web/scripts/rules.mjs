// Write src/api/generated/rules.ts: the validation patterns of the request bodies, read from
// the server's OpenAPI document, so the console checks a name with the server's own rule
// instead of a copy of it. Run by `npm run gen` after openapi-typescript.
import { readFileSync, writeFileSync } from "node:fs";

const doc = JSON.parse(readFileSync("openapi.json", "utf8"));
const schemas = doc.components.schemas;

function pattern(schema, field) {
  const prop = schemas[schema].properties[field];
  const found = prop.pattern ?? (prop.anyOf ?? []).find((s) => s.pattern)?.pattern;
  if (!found) throw new Error(`${schema}.${field} has no pattern in openapi.json`);
  return found;
}

const rules = {
  clusterName: pattern("ClusterIn", "name"),
  groupName: pattern("NewGroupIn", "name"),
  subnetId: pattern("NewGroupIn", "subnet_id"),
  spaceName: pattern("SpaceIn", "name"),
  spaceCpu: pattern("SpaceIn", "cpu"),
  spaceMemory: pattern("SpaceIn", "memory"),
};
// The space form's defaults and bounds: the request model's own (domain/spaces/requests.py).
const space = schemas.SpaceIn.properties;
// An optional field (`int | None`) keeps its bounds inside its anyOf.
const own = (p, key) => p[key] ?? (key === "default" ? undefined : (p.anyOf ?? []).find((s) => s[key] !== undefined)?.[key]);
const pick = (key) =>
  Object.fromEntries(Object.entries(space).filter(([, p]) => own(p, key) !== undefined && own(p, key) !== null).map(([k, p]) => [k, own(p, key)]));
const spaceIn = { default: pick("default"), minimum: pick("minimum"), maximum: pick("maximum"), maxLength: pick("maxLength") };
const lines = Object.entries(rules).map(([k, v]) => `  ${k}: new RegExp(${JSON.stringify(v)}),`);
writeFileSync("src/api/generated/rules.ts",
  "// Generated from openapi.json by scripts/rules.mjs: do not edit.\nexport const RULES = {\n" +
  lines.join("\n") + "\n} as const;\n\nexport const SPACE_IN = " + JSON.stringify(spaceIn, null, 2) +
  " as const;\n");
