/**
 * The topology picture: the balancer, then one box per replica showing its state (grey when dead,
 * blue when frozen), its queue (requests on it now), its event loop's utilization in the last
 * second and its share of the answers so far. Each box carries its own action buttons.
 */

/** A replica as the picture shows it: simulated (sim/session.ts ReplicaNow) or live. */
export interface ReplicaView {
  name: string;
  state: string;
  down: boolean;
  /** Requests on it now (live: in flight from the balancer). */
  queue: number;
  /** Answers (live: requests the balancer sent it) so far. */
  served: number;
  /** Busy share of its event loop (live: CPU share of one core) in the last second, 0..1; null when unknown. */
  utilization: number | null;
  /** Live only: the event loop's delay p99 in the last second, ms. */
  loopDelayMs?: number | null;
}

/** The state a replica box shows before Start (the one to be degraded: "not started, degraded"); its buttons are disabled. */
export const NOT_STARTED = 'not started';

/** Queue length that fills a box's bar. */
const FULL_QUEUE = 20;

type ActOn = (action: string, replica: number) => void;

export class Topology {
  private boxes: HTMLElement[] = [];
  /** The buttons each new box gets (simulated: kill, freeze, thaw, stop; live adds hog). */
  actions: readonly string[] = ['kill', 'freeze', 'thaw', 'stop'];
  /** Past this many replicas the boxes shrink to a dot each, without buttons (the 100-replica preset; live mode never). */
  compactOver = 12;

  constructor(
    private readonly container: HTMLElement,
    private readonly actOn: ActOn,
  ) {}

  /** Draws the replicas as they are now; boxes are made as replicas appear. */
  update(replicas: ReplicaView[]): void {
    const total = replicas.reduce((n, r) => n + r.served, 0);
    const compact = replicas.length > this.compactOver;
    this.container.classList.toggle('compact', compact);
    while (this.boxes.length < replicas.length) this.boxes.push(this.makeBox(this.boxes.length, compact));
    replicas.forEach((r, i) => {
      const box = this.boxes[i]!;
      box.dataset.state = r.state;
      box.classList.toggle('down', r.down);
      const share = total > 0 ? r.served / total : 0;
      set(box, 'queue', String(r.queue));
      const busy = r.utilization === null ? '–' : `${Math.round(r.utilization * 100)} %`;
      set(box, 'utilization', busy);
      set(box, 'delay', r.loopDelayMs === undefined || r.loopDelayMs === null ? '–' : `${r.loopDelayMs.toFixed(1)} ms`);
      set(box, 'share', `${(share * 100).toFixed(1)} %`);
      set(box, 'state', r.state);
      for (const b of Array.from(box.querySelectorAll<HTMLButtonElement>('.actions button')))
        b.disabled = r.state === 'dead' || r.state.startsWith(NOT_STARTED);
      const bar = box.querySelector<HTMLElement>('.bar > span')!;
      bar.style.width = `${Math.min(100, (r.queue / FULL_QUEUE) * 100)}%`;
      box.title = `${r.name}: ${r.state}, ${r.queue} in queue, ${busy} busy, ${(share * 100).toFixed(1)} % of answers`;
    });
  }

  clear(): void {
    this.container.replaceChildren();
    this.boxes = [];
  }

  private makeBox(i: number, compact: boolean): HTMLElement {
    const box = document.createElement('div');
    box.className = 'replica';
    box.dataset.replica = String(i);
    box.innerHTML = `<div class="name">app${i + 1}</div><div class="bar"><span></span></div>`;
    if (!compact) {
      box.insertAdjacentHTML(
        'beforeend',
        '<dl><dt>state</dt><dd data-field="state"></dd><dt>queue</dt><dd data-field="queue"></dd>' +
          '<dt>busy</dt><dd data-field="utilization"></dd><dt>share</dt><dd data-field="share"></dd>' +
          '<dt>loop delay</dt><dd data-field="delay"></dd></dl><div class="actions"></div>',
      );
      const actions = box.querySelector('.actions')!;
      for (const action of this.actions) {
        const b = document.createElement('button');
        b.type = 'button';
        b.textContent = action;
        b.dataset.action = action;
        b.addEventListener('click', () => this.actOn(action, i));
        actions.append(b);
      }
    }
    this.container.append(box);
    return box;
  }
}

function set(box: HTMLElement, field: string, text: string): void {
  const el = box.querySelector<HTMLElement>(`[data-field="${field}"]`);
  if (el && el.textContent !== text) el.textContent = text;
}
