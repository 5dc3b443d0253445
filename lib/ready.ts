/**
 * The ready-line contract between every lesson server and the harness.
 *
 * A server prints exactly one line of this form to stdout once it is listening:
 *   `ready: <name> listening on http://127.0.0.1:<port> pid=<pid>`
 * The harness waits for it (with a deadline) instead of sleeping. Keep the format and the pattern
 * in this one module so the two sides cannot drift.
 */

/** Loopback only: lesson servers are never reachable from another machine. */
export const HOST = '127.0.0.1';

/** Formats the ready line for a server called `name` bound to `port`, running as `pid`. */
export function formatReady(name: string, port: number, pid: number): string {
  return `ready: ${name} listening on http://${HOST}:${port} pid=${pid}`;
}

/** Matches a ready line; groups: 1 = name, 2 = port, 3 = pid. */
export const READY_PATTERN = /^ready: (\S+) listening on http:\/\/127\.0\.0\.1:(\d+) pid=(\d+)$/;

/** Parsed ready line, or undefined when `line` is not one. */
export function parseReady(line: string): { name: string; port: number; pid: number } | undefined {
  const m = READY_PATTERN.exec(line.trim());
  if (!m) return undefined;
  return { name: m[1]!, port: Number(m[2]), pid: Number(m[3]) };
}
