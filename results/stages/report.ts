/**
 * Result of the `stages` experiment (lesson 9): requests timestamped stage by stage on both sides
 * of one connection, on one clock (µs on the machine's monotonic clock), in five parts. Pure
 * functions only: the timeline of one request, and the numbers the shape and tables read from it.
 */
import type { MachineInfo } from '../report/format.ts';

/** The five parts, in the order they run. */
export const PARTS = ['keep-alive', 'proxy', 'blocked', 'slow-reader', 'body-limit'] as const;
export type PartName = (typeof PARTS)[number];

/** Who stamped it: the client, the lesson server, or the kit's balancer between them (the proxy part). */
export type Side = 'client' | 'server' | 'proxy';

interface Stamp {
  /** A stage name: CLIENT_STAGES or SERVER_STAGES (measure/lib/load/stage-client.ts, servers/lib/stages/stamps.ts). */
  stage: string;
  side: Side;
  /** µs on the shared monotonic clock. */
  atUs: number;
}

export interface StagedRequest {
  /** What it was: 'fresh 1', 'light', 'heavy', 'export'. */
  label: string;
  status: number;
  /** Both sides' stamps, in time order. */
  stamps: Stamp[];
  /** The server's connection after finish. */
  connectionAfter?: 'kept' | 'closed';
  /**
   * The route's own numbers: writeFalse, drainWaitUs, queuedMaxBytes and responseBytes (the export),
   * bodyBytesRead (the upload's handler), bodyBytesSent (its client), socketBytesRead (the
   * connection at finish, head included).
   */
  extra: Record<string, number>;
}

/** Requests sent one way (fresh connections, through nginx, …). */
export interface StagesGroup {
  name: string;
  requests: StagedRequest[];
}

export interface StagesPart {
  part: PartName;
  groups: StagesGroup[];
  /** Why part of it could not run here (nginx not installed), in words. */
  missing?: Record<string, string>;
}

export interface StagesResult {
  machine: MachineInfo;
  quick: boolean;
  /** scrypt cost of the blocked part's heavy request. */
  heavyCost: string;
  /** How long after the heavy request the light one was sent, ms. */
  offsetMs: number;
  /** The slow reader's pace, bytes/s, and the export's size, bytes. */
  readBytesPerS: number;
  exportBytes: number;
  /** The upload's size and the server's body limit, bytes. */
  uploadBytes: number;
  bodyLimitBytes: number;
  parts: StagesPart[];
  /** Lesson 9's exercise (--mine): the slow-reader part alone, its honouring export the student's. */
  mine?: boolean;
}

type Events = { stage: string; atUs: number }[];

/** Merges one request's client, server and (through the kit's balancer) proxy stamps into one time-ordered list. */
export function mergeStamps(client: Events, server: Events, proxy: Events = []): Stamp[] {
  const side = (events: Events, s: Side) => events.map((e) => ({ stage: e.stage, atUs: e.atUs, side: s }));
  return [...side(client, 'client'), ...side(server, 'server'), ...side(proxy, 'proxy')].sort(
    (a, b) => a.atUs - b.atUs,
  );
}

/** A row of a stage table: when it happened after the request started, and how long since the row before, µs. */
interface TimelineRow extends Stamp {
  offsetUs: number;
  tookUs: number;
}

/** The request's stamps as rows, offsets from its first stamp. */
export function timeline(r: StagedRequest): TimelineRow[] {
  const first = r.stamps[0]?.atUs ?? 0;
  return r.stamps.map((s, i) => ({
    ...s,
    offsetUs: s.atUs - first,
    tookUs: i === 0 ? 0 : s.atUs - r.stamps[i - 1]!.atUs,
  }));
}

/** When `stage` happened on `side`, µs, or undefined. */
export function at(r: StagedRequest, stage: string, side: Side): number | undefined {
  return r.stamps.find((s) => s.stage === stage && s.side === side)?.atUs;
}

/** The time between two stamps, µs, or undefined when either is missing. */
export function between(r: StagedRequest, from: [string, Side], to: [string, Side]): number | undefined {
  const a = at(r, ...from);
  const b = at(r, ...to);
  return a === undefined || b === undefined ? undefined : b - a;
}

/** The row with the longest time since the row before: where the request spent most of its time. */
export function longestStage(r: StagedRequest): TimelineRow | undefined {
  return timeline(r).reduce<TimelineRow | undefined>(
    (best, row) => (!best || row.tookUs > best.tookUs ? row : best),
    undefined,
  );
}

/** True when the request opened its own connection: the client connected, or the server accepted (either stamp is enough). */
export function connected(r: StagedRequest): boolean {
  return at(r, 'connect', 'client') !== undefined || at(r, 'accept', 'server') !== undefined;
}

/**
 * The hops outside both programs' code: from the client writing the request to the server
 * parsing it, plus from the server writing the response to the client parsing it, µs. Through
 * a proxy these hops hold the proxy's own work (its accept, parse, upstream connect or reuse).
 */
export function hopsUs(r: StagedRequest): number | undefined {
  const forward = between(r, ['request-written', 'client'], ['headers-parsed', 'server']);
  const back = between(r, ['response-headers-written', 'server'], ['response-headers-parsed', 'client']);
  return forward === undefined || back === undefined ? undefined : forward + back;
}

/** The client's time to the response's first byte, µs. */
export function timeToFirstByteUs(r: StagedRequest): number | undefined {
  return between(r, ['request-start', 'client'], ['response-headers-parsed', 'client']);
}

/** Median of the defined values, or undefined. */
export function medianOf(values: (number | undefined)[]): number | undefined {
  const v = values.filter((x): x is number => x !== undefined).sort((a, b) => a - b);
  if (v.length === 0) return undefined;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid] : (v[mid - 1]! + v[mid]!) / 2;
}

/** A part of the result, by name. */
export function part(r: StagesResult, name: PartName): StagesPart | undefined {
  return r.parts.find((p) => p.part === name);
}

/** A group of a part, by name. */
export function group(p: StagesPart | undefined, name: string): StagesGroup | undefined {
  return p?.groups.find((g) => g.name === name);
}
