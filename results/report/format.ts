/**
 * Output for people: colour that follows the stream (none when it is not a TTY or NO_COLOR is
 * set, as autocannon does), tables with cli-table3, number formats, and the machine caption every
 * table carries (what a machine is: MachineInfo; measuring one is measure/lib/machine/machine.ts).
 * Renderers call these and return strings; only entry scripts write to stdout.
 */
import { Chalk, type ChalkInstance } from 'chalk';
import Table from 'cli-table3';

/** Whether to colour output written to `stream` (FORCE_COLOR=1 forces it, for screenshots). */
export function colorEnabled(
  stream: { isTTY?: boolean } = process.stdout,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
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

/** Column alignments for a table whose first `left` columns are text and the rest numbers. */
export function textThenNumbers(left: number, total: number): ('left' | 'right')[] {
  return Array.from({ length: total }, (_, i) => (i < left ? 'left' : 'right'));
}

/** What this machine is, for table captions: cores, how busy they were, Node version. */
export interface MachineInfo {
  cores: number;
  /** 1-minute load average when the run began (it includes a run that just ended). */
  loadavg1: number;
  /** Cores' worth of CPU other programs used just before the run (0 = idle, 1 = one core busy). */
  busyCoresAtStart: number;
  /**
   * Cores' worth of CPU other programs used while the run went on, the kit's own processes left
   * out, steal from other virtual machines included (measure/lib/machine/contention.ts). Set after the
   * run; undefined where it cannot be measured (no /proc) and in fixtures.
   */
  busyCoresDuringRun?: number;
  /** The same in the run's busiest second: a burst an average over the run hides. */
  busiestSecondDuringRun?: number;
  /** Of busyCoresDuringRun, the time a hypervisor gave other virtual machines on the same host (steal). */
  stealCoresDuringRun?: number;
  /** Where the CPU during the run was read: 'proc' (Linux) or 'ps' (os.cpus() and ps: macOS). */
  cpuSource?: 'proc' | 'ps';
  /** The three other programs that took the most CPU during the run, with cores' worth: `chrome 0.40, code 0.12`. */
  busiestPrograms?: string;
  node: string;
  platform: string;
  /** nginx's version (`nginx -v`), null when it is not installed; undefined in results saved before it was recorded. */
  nginx?: string | null;
  /** redis-server's version, null when it is not installed; undefined as for nginx. */
  redis?: string | null;
}

/** `2 cores (0.05 busy before the run, 0.02 during it), load average 0.41, Node 20.20.2` */
export function machineCaption(m: MachineInfo): string {
  const peak =
    m.busiestSecondDuringRun !== undefined && m.busiestSecondDuringRun >= BUSY_BURST_CORES
      ? `, up to ${m.busiestSecondDuringRun.toFixed(2)}`
      : '';
  const steal =
    (m.stealCoresDuringRun ?? 0) >= 0.1
      ? `, ${m.stealCoresDuringRun!.toFixed(2)} of it taken by other virtual machines`
      : '';
  const source =
    m.cpuSource === 'ps' ? ' (from os.cpus() and ps: no /proc here)' : m.cpuSource === 'proc' ? ' (from /proc)' : '';
  const during =
    m.busyCoresDuringRun === undefined ? '' : `, ${m.busyCoresDuringRun.toFixed(2)} during it${peak}${steal}${source}`;
  return `${m.cores} core${m.cores === 1 ? '' : 's'} (${m.busyCoresAtStart.toFixed(2)} busy before the run${during}), load average ${m.loadavg1.toFixed(2)}, Node ${m.node}`;
}

/** Other programs busier than this many cores' worth, before or during a run, make its findings unsafe. */
const BUSY_CORES = 0.5;
/** Or this many in one second of the run: a measured step lasts a second or two. */
const BUSY_BURST_CORES = 0.75;
/**
 * Or this many taken by other virtual machines on average (steal): the host is busy, and it costs
 * more than the steal it shows. Measured here: with 0.29 cores of steal, one replica answered
 * 7,400 req/s instead of 33,000, and a shape line failed.
 */
const BUSY_STEAL_CORES = 0.25;

/** Whether other programs kept the cores busy before or during the run (see BUSY_CORES, BUSY_BURST_CORES, BUSY_STEAL_CORES). */
export function machineWasBusy(m: MachineInfo): boolean {
  return (
    m.busyCoresAtStart >= BUSY_CORES ||
    (m.busyCoresDuringRun ?? 0) >= BUSY_CORES ||
    (m.busiestSecondDuringRun ?? 0) >= BUSY_BURST_CORES ||
    (m.stealCoresDuringRun ?? 0) >= BUSY_STEAL_CORES
  );
}

/** A sentence when other programs kept the cores busy before or during the run, else undefined. */
export function busyMachineCaveat(m: MachineInfo): string | undefined {
  if (!machineWasBusy(m)) return undefined;
  const during = m.busyCoresDuringRun ?? 0;
  const peak = m.busiestSecondDuringRun ?? 0;
  const steal = m.stealCoresDuringRun ?? 0;
  // On a virtual machine the competition may be the host's other machines, which no process list shows.
  if (steal >= BUSY_STEAL_CORES && steal >= during / 2) {
    return (
      `other virtual machines on this host took about ${steal.toFixed(1)} of this machine's ${m.cores} cores while the run went on (steal time, from /proc/stat), ` +
      'so the kit had less CPU than the caption says; the findings assume idle cores, so a line that does not hold may be their doing. Run again later.'
    );
  }
  const when =
    during >= BUSY_CORES
      ? `about ${during.toFixed(1)} of the ${m.cores} cores busy while the run went on (measured: every process but the kit's own)`
      : peak >= BUSY_BURST_CORES
        ? `up to ${peak.toFixed(1)} of the ${m.cores} cores busy for a second or more while the run went on (${during.toFixed(2)} on average; measured: every process but the kit's own)`
        : `about ${m.busyCoresAtStart.toFixed(1)} of the ${m.cores} cores busy when the run began`;
  const who = m.busiestPrograms ? ` (the busiest, in cores: ${m.busiestPrograms})` : '';
  return `other programs${who} kept ${when}; the findings assume idle cores, so a line that does not hold may be their doing. Close them and run again.`;
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
