/** The `overload` experiment's tables (lesson 11): one per finding, as a student reads them. Pure. */
import { fmtMs, fmtRate, machineCaption, makeChalk, makeTable, textThenNumbers } from '../report/format.ts';
import {
  generatorLate,
  LATE_MS,
  worstLateness,
  type OverloadPass,
  type OverloadResult,
  type SpikePlan,
  type SpikeRun,
} from './report.ts';

const times = (m: number) => `${m}×`;
const pct = (n: number) => `${Math.round(n * 100)} %`;

/** One character per bucket of the spike's timeline: how many of its users were served. */
function timeline(shares: (number | null)[]): string {
  return shares.map((s) => (s === null ? ' ' : s >= 0.9 ? '█' : s >= 0.5 ? '▄' : s > 0 ? '▁' : '·')).join('');
}

function queueTable(r: OverloadResult): string {
  const t = makeTable(
    ['load', 'offered', 'p99, first quarter', 'p99, last quarter', 'queue, first quarter', 'queue, last quarter'],
    textThenNumbers(1, 6),
  );
  for (const p of r.passes.filter((x) => x.kind === 'queue'))
    t.push([
      times(p.multiple),
      fmtRate(p.rate),
      fmtMs(p.quarterP99Ms[0]),
      fmtMs(p.quarterP99Ms[3]),
      String(p.queueFirstQuarter),
      String(p.queueLastQuarter),
    ]);
  return t.toString();
}

function sheddingTable(r: OverloadResult, color: boolean): string {
  const c = makeChalk(color);
  const t = makeTable(
    [
      'load',
      'shedder',
      'goodput, 2nd half',
      'accepted p99',
      'timed out',
      'refused 503',
      'wasted work',
      'worker busy',
      'loop delay p99',
    ],
    textThenNumbers(2, 9),
  );
  const rows = r.passes
    .filter((p) => p.kind !== 'queue')
    .sort((a, b) => a.multiple - b.multiple || (a.kind === 'timeout' ? -1 : 1));
  const shedder = r.shedder === 'yours' ? 'yours' : `wait > ${r.boundMs} ms`;
  for (const p of rows) {
    const share = p.goodputLateHalf / p.capacity;
    t.push([
      times(p.multiple),
      p.kind === 'shed' ? shedder : 'none',
      (share < 0.3 ? c.red : c.green)(`${fmtRate(p.goodputLateHalf)} (${pct(share)})`),
      p.acceptedP99Ms === null ? c.red(`over ${fmtMs(r.timeoutMs)}`) : fmtMs(p.acceptedP99Ms),
      String(p.timedOut),
      String(p.shed),
      wastedText(p),
      pct(p.busyShare),
      fmtMs(p.loopDelayP99Ms),
    ]);
  }
  return t.toString();
}

function wastedText(p: OverloadPass): string {
  return p.finished ? `${p.wasted} of ${p.finished}` : '0';
}

/** The spike's table: one row per kind of users, and the simulator's rows under the lab's when given. */
function spikeTable(spikes: SpikeRun[], retries: number, afterS: number, model: SpikeRun[] = []): string {
  const t = makeTable(
    ['users', 'attempts per user, after', 'served again after the spike', 'wasted work', 'timeline (█ served, · not)'],
    textThenNumbers(1, 4).concat('left'),
  );
  const names: Record<SpikeRun['clients'], string> = {
    'no-retries': 'no retries',
    retries: `${retries} retries at once`,
    breaker: `${retries} retries, breaker`,
  };
  const row = (s: SpikeRun, who: string) =>
    t.push([
      who,
      s.attemptsPerUserAfter.toFixed(1),
      s.recoveredAfterMs === null ? `not within ${afterS} s` : fmtMs(s.recoveredAfterMs),
      s.finished ? `${s.wasted} of ${s.finished}` : '0',
      timeline(s.goodShare),
    ]);
  for (const s of spikes) row(s, names[s.clients]);
  for (const s of model) row(s, `model: ${names[s.clients]}`);
  return t.toString();
}

/** The spike's heading: its plan and the users' timeout. */
function spikeHeading(sp: SpikePlan, timeoutMs: number): string {
  return `c and e. ${sp.beforeS} s at ${times(sp.baseMultiple)}, a spike of ${times(sp.spikeMultiple)} for ${sp.spikeS} s, then ${sp.afterS} s at ${times(sp.baseMultiple)}; users give up after ${fmtMs(timeoutMs)}`;
}

const timelineKey = (sp: SpikePlan) =>
  `  one timeline character per ${sp.bucketMs} ms: █ 90 % of its users served or more, ▄ half, ▁ some, · none`;

/** The simulated spike alone (sim/run.ts --scenario overload). */
export function renderSpikes(
  spikes: SpikeRun[],
  m: { plan: SpikePlan; timeoutMs: number; retries: number },
  color: boolean,
  caption: string,
): string {
  const c = makeChalk(color);
  return [
    c.bold('Lesson 11 · overload, simulated: a spike past capacity, and users who give up and try again'),
    c.dim(caption),
    '',
    c.bold(spikeHeading(m.plan, m.timeoutMs)),
    spikeTable(spikes, m.retries, m.plan.afterS),
    c.dim(timelineKey(m.plan)),
  ].join('\n');
}

export function render(r: OverloadResult, color: boolean, caption = machineCaption(r.machine)): string {
  const c = makeChalk(color);
  const sp = r.spikePlan;
  const late = worstLateness(r);
  return [
    c.bold(
      `Lesson 11 · overload: one worker, ${fmtRate(r.capacity)} at the start (${fmtMs(r.serviceMs)} a request), users sent past it`,
    ),
    c.dim(`GET /hash on servers/overload.ts · open loop · ${caption}`),
    '',
    c.bold('a. No timeout: each user waits as long as it takes'),
    queueTable(r),
    '',
    c.bold(`b and d. Users give up after ${fmtMs(r.timeoutMs)}: the service without a shedder, and with one`),
    sheddingTable(r, color),
    '',
    c.bold(spikeHeading(sp, r.timeoutMs)),
    spikeTable(r.spikes, r.retries, sp.afterS, r.model),
    c.dim(timelineKey(sp)),
    ...(r.model?.length
      ? [
          c.dim(
            `  model: the simulator (sim/scenarios/overload.ts) with this run's ${fmtMs(r.serviceMs)} a request, one request at a time, the same users`,
          ),
        ]
      : []),
    '',
    `The generator sent each user ${fmtMs(late)} after its time at p99 (the worst pass): ` +
      (generatorLate(r)
        ? c.red(`over ${LATE_MS} ms, so it measured its own delay: no line is judged.`)
        : 'on time, so the latencies are the service’s.'),
  ].join('\n');
}
