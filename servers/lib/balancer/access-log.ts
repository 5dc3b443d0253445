/**
 * The balancers' access log (`--access-log <file>`): one line per forwarded request, naming every
 * replica it was tried on, each try's status and time, and the request's own status and time.
 * nginx writes it with the log_format below (its variables: ngx_http_upstream_module and
 * ngx_http_log_module docs); the kit's balancer writes the same line, so one parser reads both:
 *
 *   1764820862.517 GET /fast status=200 rt=1.503 ua="127.0.0.1:40003, 127.0.0.1:40001" us="504, 200" ut="1.501, 0.001"
 *
 * Times are seconds with millisecond resolution, as nginx prints them. `ua`, `us`, `ut` list the
 * tries in order (nginx separates them with ", "); a try with no value is "-". Status 499 is
 * nginx's "the client closed the connection first".
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { KitError } from '../../../lib/errors.ts';

/** nginx's log_format for this line (servers/nginx/nginx.conf.template). */
export const NGINX_ACCESS_FORMAT =
  '\'$msec $request_method $request_uri status=$status rt=$request_time ua="$upstream_addr" us="$upstream_status" ut="$upstream_response_time"\'';

/** Status nginx logs when the client closed its connection before the answer was sent. */
export const CLIENT_CLOSED = 499;

/** One try of a request, as the log has it. */
interface AccessTry {
  addr: string;
  /** The replica's status, or 502/504 for a failed try; undefined for "-". */
  status: number | undefined;
  /** Seconds spent on this try; undefined for "-". */
  timeS: number | undefined;
}

/** One line of the access log. */
export interface AccessEntry {
  /** When the request ended, s since the epoch. */
  atS: number;
  method: string;
  uri: string;
  /** The status the client got (499: it had gone). */
  status: number;
  /** From the request's first byte to its last answer byte, s. */
  requestS: number;
  tries: AccessTry[];
}

const fixed3 = (s: number) => s.toFixed(3);

/** The line for `e`, in nginx's format. */
export function formatAccessLine(e: AccessEntry): string {
  const list = (f: (t: AccessTry) => string) => (e.tries.length ? e.tries.map(f).join(', ') : '-');
  return (
    `${fixed3(e.atS)} ${e.method} ${e.uri} status=${e.status} rt=${fixed3(e.requestS)} ` +
    `ua="${list((t) => t.addr)}" us="${list((t) => (t.status === undefined ? '-' : String(t.status)))}" ut="${list((t) => (t.timeS === undefined ? '-' : fixed3(t.timeS)))}"`
  );
}

const LINE = /^(\d+(?:\.\d+)?) (\S+) (\S+) status=(\d{3}) rt=(\d+(?:\.\d+)?) ua="([^"]*)" us="([^"]*)" ut="([^"]*)"$/;

/** Parses one line; undefined for anything else (a blank or foreign line). */
export function parseAccessLine(text: string): AccessEntry | undefined {
  const m = LINE.exec(text.trim());
  if (!m) return undefined;
  // nginx separates upstream groups with " : " (an internal redirect); the kit's config has one group.
  const split = (s: string) => (s === '-' || s === '' ? [] : s.split(/, | : /));
  const addrs = split(m[6]!);
  const statuses = split(m[7]!);
  const times = split(m[8]!);
  const num = (s: string | undefined) => (s === undefined || s === '-' ? undefined : Number(s));
  return {
    atS: Number(m[1]),
    method: m[2]!,
    uri: m[3]!,
    status: Number(m[4]),
    requestS: Number(m[5]),
    tries: addrs.map((addr, i) => ({ addr, status: num(statuses[i]), timeS: num(times[i]) })),
  };
}

/** What a log says about a load: requests, those tried on more than one replica, those that took `slowS` or more. */
export interface AccessSummary {
  /** Lines read (requests the balancer finished), clients that had gone included. */
  requests: number;
  /** Requests whose answer reached the client (status not 499). */
  answered: number;
  /** Answered requests tried on more than one replica. */
  retried: number;
  /** Answered requests whose request time was at least `slowS`. */
  slow: number;
  /** The slowest retried request, whole, as the log has it. */
  sample?: string;
  /** Each retried request's first try, s (the first 1000). */
  firstTriesS: number[];
}

/**
 * Counts the requests in `text` that ended at `sinceS` (s since the epoch) or later: one load's,
 * when a warm-up came before it. Lines it cannot parse are skipped.
 */
export function summarizeAccessLog(text: string, slowS: number, sinceS = 0): AccessSummary {
  const out: AccessSummary = { requests: 0, answered: 0, retried: 0, slow: 0, firstTriesS: [] };
  let slowest = -1;
  for (const raw of text.split('\n')) {
    const e = parseAccessLine(raw);
    if (!e || e.atS < sinceS) continue;
    out.requests++;
    if (e.status === CLIENT_CLOSED) continue;
    out.answered++;
    if (e.requestS >= slowS) out.slow++;
    if (e.tries.length > 1) {
      out.retried++;
      if (out.firstTriesS.length < 1000) out.firstTriesS.push(e.tries[0]!.timeS ?? 0);
      if (e.requestS > slowest) {
        slowest = e.requestS;
        out.sample = raw.trim();
      }
    }
  }
  return out;
}

/**
 * The kit's balancer's writer: lines are kept in memory and appended to the file every 200 ms
 * (one write for many requests, as nginx's `buffer=` does), and at once on flush().
 */
export class AccessLogWriter {
  private readonly fd: number;
  private pending: string[] = [];
  private readonly timer: NodeJS.Timeout;

  /** Opens `file` for appending; KIT_ERR_USAGE if it cannot be (no such folder, no permission). */
  constructor(file: string) {
    try {
      this.fd = openSync(file, 'a');
    } catch (err) {
      throw new KitError('KIT_ERR_USAGE', `cannot write the access log ${file}: ${(err as Error).message}`);
    }
    this.timer = setInterval(() => this.flush(), 200);
    this.timer.unref();
  }

  write(e: AccessEntry): void {
    this.pending.push(formatAccessLine(e) + '\n');
  }

  flush(): void {
    if (this.pending.length === 0) return;
    const text = this.pending.join('');
    this.pending = [];
    writeSync(this.fd, text);
  }

  close(): void {
    clearInterval(this.timer);
    this.flush();
    closeSync(this.fd);
  }
}
