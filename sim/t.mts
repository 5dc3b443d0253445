import { simulate } from './engine.ts';
import { exp, fixed } from './dist.ts';
for (const loop of ['fifo', 'turns'] as const) for (const pd of [0.3, 4]) {
  const d = simulate({ loop, replicas: 1, policy: 'round-robin', clients: { kind: 'closed', count: 1 }, pathDelay: exp(pd), service: fixed(0.1), hogs: [{ replica: 0, ms: fixed(30), connections: 3 }], durationMs: 60000, warmupMs: 1000 });
  console.log(loop, 'path', pd, 'probe mean', d.latency.mean, 'p50', d.latency.p50, 'p95', d.latency.p95, 'max', d.latency.max);
}
