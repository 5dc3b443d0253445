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

/**
 * The one other address a kit server may listen on: its own end of a veth link in a network
 * namespace the kit made for lesson 12 (servers/lib/network/netns.ts gives 10.<200–249>.<n>.2),
 * reachable from this machine alone.
 */
export const NAMESPACE_HOST = /^10\.2[0-4]\d\.\d{1,2}\.2$/;

/** Formats the ready line for a server called `name` bound to `port` (on `host`), running as `pid`. */
export function formatReady(name: string, port: number, pid: number, host = HOST): string {
  return `ready: ${name} listening on http://${host}:${port} pid=${pid}`;
}

/** Matches a ready line; groups: 1 = name, 2 = host, 3 = port, 4 = pid. */
export const READY_PATTERN =
  /^ready: (\S+) listening on http:\/\/(127\.0\.0\.1|10\.2[0-4]\d\.\d{1,2}\.2):(\d+) pid=(\d+)$/;

/** Parsed ready line, or undefined when `line` is not one. */
export function parseReady(line: string): { name: string; host: string; port: number; pid: number } | undefined {
  const m = READY_PATTERN.exec(line.trim());
  if (!m) return undefined;
  return { name: m[1]!, host: m[2]!, port: Number(m[3]), pid: Number(m[4]) };
}
