/**
 * The Traffic Lab page: reads the form, runs the simulator in the page (sim/engine.ts, the same
 * picking, failover and autoscaling code as the lab), and draws the topology, the per-second
 * charts and a summary of the run. The summary's cells carry data-testid attributes, which the
 * browser tests read.
 */
import type { SimSession } from '../../sim/engine.ts';
import type { FaultAction } from '../../sim/types.ts';
import { Charts } from './charts.ts';
import { Runner, type SecondPoint } from './runner.ts';
import { parseSettings, simConfig } from './settings.ts';
import { Topology } from './topology.ts';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

const form = $<HTMLFormElement>('settings');
const status = $('status');
const charts = new Charts($('charts'));
const topology = new Topology($('replicas'), act);
let runner: Runner | undefined;
let pending: SecondPoint[] = [];

function setStatus(state: 'idle' | 'running' | 'finished' | 'error', text: string): void {
  status.dataset.state = state;
  status.textContent = text;
}

/** The form's fields as strings (checkboxes as true/false). */
function formValues(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const el of Array.from(form.elements) as HTMLInputElement[]) {
    if (!el.name) continue;
    out[el.name] = el.type === 'checkbox' ? el.checked : el.value;
  }
  return out;
}

function start(): void {
  stop();
  const parsed = parseSettings(formValues());
  if (!parsed.ok) {
    setStatus('error', parsed.message);
    form.querySelector<HTMLElement>(`[name="${parsed.field}"]`)?.focus();
    return;
  }
  charts.clear();
  topology.clear();
  pending = [];
  const s = parsed.settings;
  runner = new Runner(simConfig(s), s.speed === 'fast', {
    second: (p) => pending.push(p),
    frame: (replicas, now) => {
      topology.update(replicas);
      for (const p of pending) charts.add(p);
      if (pending.length) charts.draw();
      pending = [];
      $('clock').textContent = `${(now / 1000).toFixed(1)} s`;
    },
    finished: (session) => {
      summarize(session);
      setStatus('finished', `finished: ${s.durationS} s simulated`);
    },
  });
  setStatus('running', `running: ${s.policy}, ${s.replicas} replica${s.replicas === 1 ? '' : 's'}`);
  runner.start();
}

function stop(): void {
  if (runner?.running) {
    runner.stop();
    summarize(runner.session);
    setStatus('idle', 'stopped');
  }
}

/** The run's totals so far into the summary table. */
function summarize(session: SimSession): void {
  const t = session.totals();
  const cells: Record<string, string> = {
    'run-answers': String(t.completed),
    'run-failed': String(t.failed),
    'run-retried': String(t.retried),
    'run-p50': t.latency.p50.toFixed(2),
    'run-p95': t.latency.p95.toFixed(2),
    'run-p99': t.latency.p99.toFixed(2),
  };
  for (const [id, text] of Object.entries(cells)) $(id).textContent = text;
}

function act(action: FaultAction, replica?: number): void {
  if (!runner?.running) return setStatus('error', 'start a run first: actions act on a running simulation');
  try {
    runner.session.act(action, replica);
  } catch (err) {
    setStatus('error', (err as Error).message);
  }
}

/** "Kill 1 app server": the first replica still taking requests. */
function killOne(): void {
  const i = runner?.session.replicas().findIndex((r) => r.state === 'up' && !r.down) ?? -1;
  if (i < 0) return setStatus('error', runner?.running ? 'no replica is up' : 'start a run first');
  act('kill', i);
}

form.addEventListener('submit', (e) => {
  e.preventDefault();
  start();
});
$('stop').addEventListener('click', stop);
$('kill-one').addEventListener('click', killOne);
$('add').addEventListener('click', () => act('add'));
$('remove').addEventListener('click', () => act('remove'));
// Periodic summary while running, so the table is never far behind the charts.
setInterval(() => runner?.running && summarize(runner.session), 1000);
setStatus('idle', 'ready: choose the settings and press Start');
