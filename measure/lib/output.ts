/**
 * Output for people: colour that follows the stream (none when it is not a TTY or NO_COLOR is
 * set, as autocannon does), tables with cli-table3, and the machine caption every table carries.
 * Renderers call these and return strings; only entry scripts write to stdout.
 */
import { Chalk, type ChalkInstance } from 'chalk';
import Table from 'cli-table3';
import os from 'node:os';

/** Whether to colour output written to `stream` (FORCE_COLOR=1 forces it, for screenshots). */
export function colorEnabled(stream: { isTTY?: boolean } = process.stdout, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0') return true;
  return Boolean(stream.isTTY) && env.TERM !== 'dumb';
}

/** A chalk instance with colour on or off. */
export function makeChalk(color: boolean): ChalkInstance {
  return new Chalk({ level: color ? 1 : 0 });
}

/** A table with the given header; no colour codes of cli-table3's own (we colour cells ourselves). */
export function makeTable(head: string[], colAligns?: ('left' | 'right' | 'center')[]): Table.Table {
  return new Table({
    head,
    style: { head: [], border: [] },
    // No rule between body rows: a compact table reads faster.
    chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
    ...(colAligns ? { colAligns } : {}),
  });
}

/** What this machine is, for table captions: cores, load average, Node version. */
export interface MachineInfo {
  cores: number;
  loadavg1: number;
  node: string;
  platform: string;
}

/** Reads the machine's cores (os.availableParallelism), 1-minute load average and Node version. */
export function machineInfo(): MachineInfo {
  return {
    cores: os.availableParallelism(),
    loadavg1: Math.round(os.loadavg()[0]! * 100) / 100,
    node: process.versions.node,
    platform: `${process.platform}-${process.arch}`,
  };
}

/** `2 cores, load average 0.41, Node 20.20.2` */
export function machineCaption(m: MachineInfo): string {
  return `${m.cores} core${m.cores === 1 ? '' : 's'}, load average ${m.loadavg1.toFixed(2)}, Node ${m.node}`;
}

/** A duration in ms for a table cell: `1,532 ms`, `12.4 ms`, `0.31 ms`. */
export function fmtMs(ms: number): string {
  if (ms >= 100) return `${Math.round(ms).toLocaleString('en-US')} ms`;
  if (ms >= 10) return `${ms.toFixed(1)} ms`;
  return `${ms.toFixed(2)} ms`;
}

/** A rate for a table cell: `52.1 req/s`. */
export function fmtRate(rps: number): string {
  return `${rps >= 100 ? Math.round(rps).toLocaleString('en-US') : rps.toFixed(1)} req/s`;
}
