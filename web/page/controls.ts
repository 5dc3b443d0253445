/**
 * The Traffic Lab at first sight: which of the page's buttons and fields apply to the settings and
 * to what is running now (the rest are disabled), and the topology the settings stand for, drawn
 * before Start. Pure: the page applies these to its DOM, and unit tests read them as they are.
 */
import { RANGES, LARGE_REPLICAS } from './settings.ts';
import { NOT_STARTED, type ReplicaView } from './topology.ts';

/** What is going on in the page now. */
export interface PageState {
  /** A simulation is running in the page. */
  simRunning: boolean;
  /** A live run is going (or starting), from this tab or another. */
  liveRunning: boolean;
}

export type ButtonId = 'start' | 'stop' | 'kill-one' | 'add' | 'remove';

/** The state of the page's buttons: disabled or not, and the kill button's words for the topology. */
export function buttonStates(
  values: Record<string, unknown>,
  s: PageState,
): Record<ButtonId, { disabled: boolean; label?: string }> {
  const running = s.simRunning || s.liveRunning;
  // One app server has no balancer: nothing to add a replica to or take one from.
  const balanced = values.topology !== 'single';
  return {
    // A simulation may be started again at any time (Start restarts it); a live run must be stopped first.
    start: { disabled: s.liveRunning },
    stop: { disabled: !running },
    'kill-one': { disabled: !running, label: balanced ? 'Kill 1 replica' : 'Kill the app server' },
    add: { disabled: !running || !balanced },
    remove: { disabled: !running || !balanced },
  };
}

/**
 * The form's fields that apply to the other settings, by name (true: enabled). A field that does
 * not apply keeps its value, so switching back restores it.
 */
export function fieldsThatApply(values: Record<string, unknown>): Record<string, boolean> {
  const live = values.mode === 'live';
  const open = values.clients === 'open';
  return {
    replicas: values.topology === 'balanced',
    networks: values.policy === 'ip-hash',
    rate: open,
    // A live run has no think time: its connections send back to back, up to the rate.
    thinkMs: !open && !live,
    speed: !live,
    model: live,
    degrade: values.topology !== 'single',
  };
}

/**
 * The replicas the settings stand for, as boxes not yet started (the last one marked when it will
 * be degraded); undefined while the replica count is not a valid number (Start names the field).
 */
export function previewReplicas(values: Record<string, unknown>): ReplicaView[] | undefined {
  const n = values.topology === 'single' ? 1 : values.topology === 'large' ? LARGE_REPLICAS : Number(values.replicas);
  if (!Number.isInteger(n) || n < 1 || (values.topology === 'balanced' && n > RANGES.replicas.max)) return undefined;
  const degraded = values.degrade === true && n > 1;
  return Array.from({ length: n }, (_, i) => ({
    name: `app${i + 1}`,
    state: degraded && i === n - 1 ? `${NOT_STARTED}, degraded` : NOT_STARTED,
    down: false,
    queue: 0,
    served: 0,
    utilization: null,
  }));
}

/** The balancer box's words for the settings (policy names as the form shows them), or undefined for one app server, which has none. */
export function balancerLabel(values: Record<string, unknown>): string | undefined {
  if (values.topology === 'single') return undefined;
  const policy = String(values.policy ?? '');
  return `balancer · ${policy === 'ip-hash' ? policy : policy.replace(/-/g, ' ')}`;
}
