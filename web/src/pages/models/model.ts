// Model shapes are the server's OpenAPI types (src/api/generated/); none is named by hand.
import type { Schemas } from "../../api/client";

export type Model = Schemas["ModelOut"];
export type DownloadRequest = Schemas["DownloadIn"];

export const modelsKey = (cluster: string) => ["models", cluster] as const;
export const modelsPath = (cluster: string) => `/clusters/${cluster}/models`;

/** "1.5 GB", "12 kB": a size for people (powers of 1000, as S3's console shows). */
export function sizeText(bytes: number): string {
  const units = ["B", "kB", "MB", "GB", "TB"];
  let n = bytes;
  let i = 0;
  while (n >= 1000 && i < units.length - 1) {
    n /= 1000;
    i++;
  }
  return `${i === 0 ? n : n.toFixed(1)} ${units[i]}`;
}
