/**
 * The Traffic Lab page: reads the form, and either runs the simulator in the page (sim/engine.ts,
 * the same picking, failover and autoscaling code as the lab) or, in live mode, asks the page's
 * server to run the real lab (live.ts). Either way it draws the topology, the per-second charts
 * and a summary of the run. Before a run it draws the topology the settings stand for, and at any
 * time it disables the buttons and fields that do not apply (controls.ts). The summary's cells
 * carry data-testid attributes, which the browser tests read.
 */
// First: it makes navigator.language a tag that uPlot's number format accepts.
import './locale.ts';
import type { FaultAction, SimPolicy } from '../../sim/types.ts';
import { Charts } from './charts.ts';
import { LiveClient, replicaViews } from './live.ts';
import { liveSettingsFrom, modelConfig, type LiveSecond, type LiveSettings } from './live-settings.ts';
import { clearRow, fill, summarize } from './summary.ts';
import { Runner, type SecondPoint } from './runner.ts';
import { parseSettings, simConfig } from './settings.ts';
import { Topology } from './topology.ts';
import { applyToPage, drawPreview, readForm } from './form.ts';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

const form = $<HTMLFormElement>('settings');
const status = $('status');
const charts = new Charts($('charts'));
const topology = new Topology($('replicas'), act);
let runner: Runner | undefined;
let pending: SecondPoint[] = [];
/** The replicas of the live run's last second, while a live run is going. */
let live: LiveSecond['replicas'] | undefined;
/** The simulator run alongside a live run (same settings, real time), and its seconds not yet charted. */
let model: Runner | undefined;
/** A live start is on its way to the server (Stop then stops it as soon as it has started). */
let liveStarting = false;
const modelSeconds = new Map<number, SecondPoint>();
const SIM_ACTIONS = ['kill', 'freeze', 'thaw', 'stop'];
const LIVE_ACTIONS = [...SIM_ACTIONS, 'hog'];

function setStatus(state: 'idle' | 'running' | 'finished' | 'error', text: string): void {
  status.dataset.state = state;
  status.textContent = text;
  applyControls();
}

/** The buttons and fields that apply now enabled, the rest disabled (controls.ts). */
const applyControls = () =>
  applyToPage(form, { simRunning: runner?.running === true, liveRunning: live !== undefined || liveStarting });

/** Before a run (and between runs), the topology the settings stand for. */
function preview(): void {
  if (!runner?.running && !live && !liveStarting) drawPreview(form, topology, { sim: SIM_ACTIONS, live: LIVE_ACTIONS });
}

/** A run has started: its charts replace the note that says what they will show. */
function runStarted(): void {
  $('charts-empty').hidden = true;
  $('charts').hidden = false;
  applyControls();
}

const formValues = () => readForm(form);

function start(): void {
  if (live || liveStarting)
    return setStatus(
      'error',
      'a live run is going (from this tab or another): press Stop and wait for it to end first',
    );
  stop();
  const values = formValues();
  if (values.mode === 'live') return void startLive(values);
  const parsed = parseSettings(values);
  if (!parsed.ok) {
    setStatus('error', parsed.message);
    form.querySelector<HTMLElement>(`[name="${parsed.field}"]`)?.focus();
    return;
  }
  charts.clear();
  topology.clear();
  clearRow('run');
  topology.actions = SIM_ACTIONS;
  topology.compactOver = 12;
  $('model-row').hidden = true;
  $('run-label').textContent = 'simulated';
  charts.showModel(false);
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
  runStarted();
}

function stop(): void {
  if (live || liveStarting) void client.post('stop', {});
  if (runner?.running) {
    runner.stop();
    summarize(runner.session);
    setStatus('idle', 'stopped');
  }
}

function act(action: string, replica?: number): void {
  if (live) return void actLive(action, replica);
  if (!runner?.running) return setStatus('error', 'start a run first: actions act on a running simulation');
  try {
    runner.session.act(action as FaultAction, replica);
  } catch (err) {
    setStatus('error', (err as Error).message);
  }
}

/** "Kill 1 app server": the first replica still taking requests. */
function killOne(): void {
  if (live) {
    const i = live.findIndex((r) => r.state === 'up' && !r.down);
    return i < 0 ? setStatus('error', 'no replica is up') : act('kill', i);
  }
  const i = runner?.session.replicas().findIndex((r) => r.state === 'up' && !r.down) ?? -1;
  if (i < 0) return setStatus('error', runner?.running ? 'no replica is up' : 'start a run first');
  act('kill', i);
}

async function startLive(values: Record<string, unknown>): Promise<void> {
  const parsed = liveSettingsFrom(values);
  if (!parsed.ok) {
    setStatus('error', `live mode: ${parsed.message}`);
    form.querySelector<HTMLElement>(`[name="${parsed.field}"]`)?.focus();
    return;
  }
  if (values.degrade && parsed.settings.replicas < 2) {
    setStatus('error', 'live mode: degrade needs at least 2 replicas: the blocked one and one to go to');
    form.querySelector<HTMLElement>('[name="degrade"]')?.focus();
    return;
  }
  // The last run's boxes and totals go now: their buttons would act on nothing while the lab starts.
  topology.clear();
  clearRow('run');
  setStatus('running', 'starting the replicas and the balancer…');
  liveStarting = true;
  applyControls();
  const r = await client.post('start', parsed.settings).finally(() => {
    liveStarting = false;
    applyControls();
  });
  if (r.status !== 200)
    return setStatus(
      'error',
      `${r.body.error ?? `HTTP ${r.status}`}${r.body.field ? ` (field: ${r.body.field})` : ''}`,
    );
  // "Degrade the last replica": lesson 4's hog on it, for the whole run.
  if (values.degrade) await client.post('act', { action: 'hog', replica: `app${parsed.settings.replicas}` });
}

async function actLive(action: string, replica?: number): Promise<void> {
  const body = action === 'add' || action === 'remove' ? { action } : { action, replica: live?.[replica ?? -1]?.name };
  const r = await client.post('act', body);
  if (r.status !== 200) return setStatus('error', r.body.error ?? `HTTP ${r.status}`);
  // The model does the same to its replica (it has no hog to start mid-run).
  if (model?.running && action !== 'hog') {
    try {
      model.session.act(action as FaultAction, replica);
    } catch {
      /* the model's replica may be in another state: the lab's answer is the one that counts */
    }
  }
}

/** Starts the simulator alongside the live run, when the box is ticked. */
function startModel(s: LiveSettings): void {
  model?.stop();
  model = undefined;
  modelSeconds.clear();
  const checked = (name: string) => (form.elements.namedItem(name) as HTMLInputElement).checked;
  const config = checked('model') ? modelConfig(s, 1, checked('degrade') ? s.replicas - 1 : undefined) : undefined;
  $('model-row').hidden = !config;
  clearRow('model');
  charts.showModel(Boolean(config));
  if (!config) return;
  model = new Runner(config, false, {
    second: (p) => modelSeconds.set(p.second, p),
    frame: () => {},
    finished: () => {},
  });
  model.start();
}

function stopModel(): void {
  model?.stop();
}

function liveStarted(s: LiveSettings): void {
  if (runner?.running) stop();
  charts.clear();
  topology.clear();
  topology.actions = LIVE_ACTIONS;
  topology.compactOver = Infinity; // kills and adds leave dead boxes; the live ones keep their buttons
  live = [];
  $('run-label').textContent = 'live';
  startModel(s);
  runStarted();
  setStatus(
    'running',
    `live: ${s.policy}, ${s.replicas} replica${s.replicas === 1 ? '' : 's'}, ${s.connections} connections, ${s.durationS} s`,
  );
}

function liveSecond(s: LiveSecond): void {
  if (!live) return; // a second from a run this page has not been told of (the hello carries it)
  live = s.replicas;
  topology.update(replicaViews(s));
  charts.add({ ...s, model: modelSeconds.get(s.second) ?? null });
  modelSeconds.delete(s.second);
  charts.draw();
  $('clock').textContent = `${s.second + 1} s`;
  fill('run', s.totals);
  if (model) summarize(model.session, 'model');
}

const client = new LiveClient({
  hello: (running, settings) => {
    if (!running || !settings || live) return;
    liveStarted(settings); // joined mid-run: the model, if ticked, starts from now
    setStatus(
      'running',
      `a live run is going (started from another tab): ${settings.policy}, ${settings.replicas} replicas; its seconds follow`,
    );
  },
  started: liveStarted,
  second: liveSecond,
  ended: (reason) => {
    live = undefined;
    stopModel();
    setStatus('finished', `live run ended: ${reason}; every process it started is stopped`);
  },
  lost: () => live && setStatus('error', 'lost the stream from the Traffic Lab server; is it still running?'),
});

// Between runs the picture and the controls follow the settings as they are typed.
form.addEventListener('input', () => {
  preview();
  applyControls();
});
form.addEventListener('submit', (e) => {
  e.preventDefault();
  start();
});
$('stop').addEventListener('click', stop);
$('kill-one').addEventListener('click', killOne);
$('add').addEventListener('click', () => act('add'));
$('remove').addEventListener('click', () => act('remove'));
// A new policy takes effect at once, in the lab (and its model) or in the simulator.
form.querySelector('[name="policy"]')!.addEventListener('change', (e) => {
  const policy = (e.target as HTMLSelectElement).value as SimPolicy;
  applyControls();
  if (!live) {
    if (runner?.running) runner.session.setPolicy(policy);
    return;
  }
  void client.post('act', { action: 'policy', policy }).then((r) => {
    if (r.status !== 200) return setStatus('error', r.body.error ?? `HTTP ${r.status}`);
    if (model?.running) model.session.setPolicy(policy);
  });
});
// Periodic summary while running, so the table is never far behind the charts.
setInterval(() => runner?.running && summarize(runner.session), 1000);
preview();
setStatus('idle', 'ready: choose the settings and press Start');
