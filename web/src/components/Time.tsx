// Server timestamps are UTC; SQLite returns them without a zone, so a missing zone means UTC.
export function parseTime(value: string): Date {
  return new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value}Z`);
}

export function formatTime(value: string | null | undefined): string {
  if (!value) return "-";
  const d = parseTime(value);
  const pad = (n: number) => String(n).padStart(2, "0");
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
  );
}

/** "42s", "3m 05s", "1h 02m": how long something took or has been running. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, "0")}m`;
}

/** A timestamp in local time; `clock` shows only the time of day (the full date is the tooltip). */
export function Time({ value, clock }: { value: string | null | undefined; clock?: boolean }) {
  if (!value) return <>-</>;
  const text = formatTime(value);
  const iso = parseTime(value).toISOString();
  return (
    <time dateTime={iso} title={iso}>
      {clock ? text.slice(11) : text}
    </time>
  );
}
