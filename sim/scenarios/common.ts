/**
 * What every simulated scenario shares: its shape (a name, the lab experiment it mirrors, a run
 * that returns that experiment's own Result type and a rendering of it) and the caption its
 * table carries instead of the lab's machine line. The scenarios render with the lab's terminal renderers (chalk,
 * cli-table3); only the engine (sim/engine.ts and what it imports) is free of Node.js APIs.
 */
import type { MachineInfo } from '../../results/report/format.ts';
import { fixed } from '../dist.ts';
import type { SimResult } from '../engine.ts';

export interface ScenarioOptions {
  seed: number;
  /** How each replica's event loop orders waiting requests (see SimConfig.loop); scenarios default to 'turns', as Node does. */
  loop?: 'fifo' | 'turns';
  /** Requests per simulated run, for scenarios sized by count (the 100-replica run); else its default. */
  requests?: number;
  /** How old the balancer's load information is, ms, for the stale scenario; else its default (50). */
  staleMs?: number;
  /** The autoscale scenario's controller settings, where they differ from DEFAULT_HPA (lesson 8, exercises 1 and 4). */
  hpa?: { windowMs?: number; tolerance?: number };
  /** Told what a long scenario is doing, one line per step (the CLI prints it on stderr). */
  progress?: (step: string) => void;
}

interface ScenarioRun {
  /** The mirrored experiment's Result (so `--json` is comparable with the lab's), or the scenario's own. */
  result: unknown;
  /** The table(s), in the matching experiment's format. */
  render(color: boolean): string;
  /** Simulated requests and engine events over every simulation the scenario ran. */
  totals: { requests: number; events: number; runs: number };
}

export interface Scenario {
  name: string;
  /** The lab experiment this mirrors (`measure/<name>.ts`), if any. */
  mirrors?: string;
  summary: string;
  /** Long scenarios return a promise and yield between simulations, so a signal can stop them. */
  run(options: ScenarioOptions): ScenarioRun | Promise<ScenarioRun>;
}

/** The Result's machine for a simulation: none (a simulated replica has a core of its own); the caption says what was simulated instead. */
export const SIM_MACHINE: MachineInfo = {
  cores: 0,
  loadavg1: 0,
  busyCoresAtStart: 0,
  node: 'simulated',
  platform: 'simulated',
};

/** Words for a caption: how the simulated event loops ordered waiting requests. */
export function loopWords(loop: ScenarioOptions['loop']): string {
  return (loop ?? DEFAULT_LOOP) === 'turns'
    ? 'event loops served in turns'
    : 'event loops served first come, first served';
}

/** The loop scenarios use unless told otherwise: Node's turns (SimConfig.loop). */
export const DEFAULT_LOOP = 'turns' as const;

/** The caption a simulated scenario's table carries where the lab's says what machine it ran on. */
export function simCaption(o: ScenarioOptions): string {
  return `simulated (seed ${o.seed}; ${loopWords(o.loop)}; each replica its own core, no cost for the balancer or the load generator)`;
}

/** Adds up what a list of simulations did. */
export function totalsOf(results: readonly SimResult[]): ScenarioRun['totals'] {
  return {
    requests: results.reduce((n, r) => n + r.counts.sent, 0),
    events: results.reduce((n, r) => n + r.counts.events, 0),
    runs: results.length,
  };
}

/**
 * /fast on a replica's event loop: 0.1 ms. A replica answers /fast over one loopback connection
 * in about 0.1-0.2 ms here (client to client), so its own share is at most that.
 */
export const FAST = fixed(0.1);
