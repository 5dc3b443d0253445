// The Traffic Lab's first sight, as rules (web/page/controls.ts): before Start nothing can be
// stopped or acted on, the kill button is named for the topology, a field that does not apply to
// the other settings is disabled, and the settings' replicas are drawn as boxes not started. The
// page applies these; test/integration/traffic-lab.test.ts checks them in a real browser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { balancerLabel, buttonStates, fieldsThatApply, previewReplicas } from '../../web/page/controls.ts';
import { NOT_STARTED } from '../../web/page/topology.ts';
import { failOnWarnings } from '../helpers.ts';

failOnWarnings();

const FORM = {
  topology: 'balanced',
  replicas: '3',
  policy: 'round-robin',
  clients: 'closed',
  mode: 'sim',
  degrade: false,
};
const disabled = (b: Record<string, { disabled: boolean }>) =>
  Object.keys(b)
    .filter((k) => b[k]!.disabled)
    .sort();

test('buttons: before a run only Start; a simulation enables the rest; a live run disables Start; one app server has no replica to add', () => {
  assert.deepEqual(disabled(buttonStates(FORM, { simRunning: false, liveRunning: false })), [
    'add',
    'kill-one',
    'remove',
    'stop',
  ]);
  assert.deepEqual(disabled(buttonStates(FORM, { simRunning: true, liveRunning: false })), []);
  assert.deepEqual(disabled(buttonStates(FORM, { simRunning: false, liveRunning: true })), ['start']);
  const single = buttonStates({ ...FORM, topology: 'single' }, { simRunning: true, liveRunning: false });
  assert.deepEqual(disabled(single), ['add', 'remove']);
  assert.equal(single['kill-one'].label, 'Kill the app server');
  assert.equal(buttonStates(FORM, { simRunning: true, liveRunning: false })['kill-one'].label, 'Kill 1 replica');
});

test('fields: each applies only where the other settings use it', () => {
  const off = (values: Record<string, unknown>) =>
    Object.entries(fieldsThatApply(values))
      .filter(([, on]) => !on)
      .map(([k]) => k)
      .sort();
  assert.deepEqual(off(FORM), ['model', 'networks', 'rate']);
  assert.deepEqual(off({ ...FORM, policy: 'ip-hash', clients: 'open' }), ['model', 'thinkMs']);
  assert.deepEqual(off({ ...FORM, mode: 'live' }), ['networks', 'rate', 'speed', 'thinkMs']);
  assert.deepEqual(off({ ...FORM, topology: 'single' }), ['degrade', 'model', 'networks', 'rate', 'replicas']);
  assert.deepEqual(off({ ...FORM, topology: 'large' }), ['model', 'networks', 'rate', 'replicas']);
});

test('the topology before Start: a box per replica, not started, the degraded one marked; no boxes for a count Start would refuse', () => {
  assert.deepEqual(
    previewReplicas(FORM)!.map((r) => [r.name, r.state]),
    [
      ['app1', NOT_STARTED],
      ['app2', NOT_STARTED],
      ['app3', NOT_STARTED],
    ],
  );
  assert.equal(previewReplicas({ ...FORM, degrade: true })!.at(-1)!.state, `${NOT_STARTED}, degraded`);
  assert.equal(
    previewReplicas({ ...FORM, topology: 'single', degrade: true })!.length,
    1,
    'one app server, never degraded: nothing to go to',
  );
  assert.equal(previewReplicas({ ...FORM, topology: 'large' })!.length, 100);
  for (const replicas of ['0', '11', '2.5', '', 'three'])
    assert.equal(previewReplicas({ ...FORM, replicas }), undefined, replicas);
  assert.ok(previewReplicas(FORM)!.every((r) => r.queue === 0 && r.served === 0 && r.utilization === null && !r.down));
});

test('the balancer box names the policy as the form does, and one app server has none', () => {
  assert.equal(balancerLabel(FORM), 'balancer · round robin');
  assert.equal(balancerLabel({ ...FORM, policy: 'power-of-two-choices' }), 'balancer · power of two choices');
  assert.equal(balancerLabel({ ...FORM, policy: 'ip-hash' }), 'balancer · ip-hash');
  assert.equal(balancerLabel({ ...FORM, topology: 'single' }), undefined);
});
