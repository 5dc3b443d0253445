/**
 * The settings form as the page meets it: its values, the buttons and fields enabled or disabled
 * as controls.ts decides, the balancer box named for the policy (hidden for one app server), and
 * the topology drawn from the settings before Start.
 */
import {
  balancerLabel,
  buttonStates,
  fieldsThatApply,
  previewReplicas,
  type ButtonId,
  type PageState,
} from './controls.ts';
import type { Topology } from './topology.ts';

/** The form's fields as strings (checkboxes as true/false), disabled ones included. */
export function readForm(form: HTMLFormElement): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const el of Array.from(form.elements) as HTMLInputElement[]) {
    if (!el.name) continue;
    out[el.name] = el.type === 'checkbox' ? el.checked : el.value;
  }
  return out;
}

/** Enables the buttons and fields that apply to the settings and to `state`, names the kill button for the topology, and labels the balancer. */
export function applyToPage(form: HTMLFormElement, state: PageState): void {
  const values = readForm(form);
  for (const [id, b] of Object.entries(buttonStates(values, state)) as [
    ButtonId,
    { disabled: boolean; label?: string },
  ][]) {
    const el = document.getElementById(id) as HTMLButtonElement;
    el.disabled = b.disabled;
    if (b.label) el.textContent = b.label;
  }
  for (const [name, applies] of Object.entries(fieldsThatApply(values))) {
    const el = form.elements.namedItem(name) as HTMLInputElement | null;
    if (el) el.disabled = !applies;
  }
  const balancer = document.getElementById('balancer')!;
  const label = balancerLabel(values);
  balancer.hidden = label === undefined;
  if (label) balancer.textContent = label;
}

/** Draws the replicas the settings stand for, not started, with the buttons of the mode chosen (disabled until Start). */
export function drawPreview(
  form: HTMLFormElement,
  topology: Topology,
  actions: { sim: readonly string[]; live: readonly string[] },
): void {
  const values = readForm(form);
  topology.clear();
  topology.actions = values.mode === 'live' ? actions.live : actions.sim;
  topology.compactOver = 12;
  const replicas = previewReplicas(values);
  if (replicas) topology.update(replicas);
}
