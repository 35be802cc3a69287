// Log lines for a person at a terminal (SPEC §14: "pretty-printed on a terminal, JSON otherwise").
// pino-pretty is not a dependency; this small formatter turns pino's JSON lines into
// "12:00:01 INFO  message key=value" and leaves JSON for pipes and log collectors.
const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO ', 40: 'WARN ', 50: 'ERROR', 60: 'FATAL' };
const COLOURS: Record<number, string> = { 40: '\x1b[33m', 50: '\x1b[31m', 60: '\x1b[31m' };
const SKIP = new Set(['level', 'time', 'msg', 'pid', 'hostname']);

export function prettyLine(json: string, colour = false): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const level = Number(o.level);
  const time = new Date(Number(o.time) || Date.now()).toTimeString().slice(0, 8);
  const rest = Object.entries(o)
    .filter(([k]) => !SKIP.has(k))
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  const label = LEVELS[level] ?? String(o.level);
  const shown = colour && COLOURS[level] ? `${COLOURS[level]}${label}\x1b[0m` : label;
  const msg = typeof o.msg === 'string' ? o.msg : JSON.stringify(o.msg ?? '');
  return `${time} ${shown} ${msg}${rest ? `  ${rest}` : ''}\n`;
}

/** A pino destination writing readable lines to stdout. */
export const prettyStdout = {
  write(chunk: string): void {
    for (const line of chunk.split('\n')) if (line) process.stdout.write(prettyLine(line, true));
  },
};
