import { Lab } from './lib/lab.ts';
import { runLoad } from './lib/load.ts';
import { startBalancer, startReplicas } from './lib/topology.ts';
const lab = new Lab();
try {
  const replicas = await startReplicas(lab, 2);
  const show = (label: string, r: any) => console.log(label, r.throughput, 'req/s p50', r.latency.p50, 'p95', r.latency.p95, 'gen cpu', r.generatorCpu);
  show('direct app1', await runLoad({ url: `${replicas[0]!.url}/fast`, connections: 6, durationS: 2 }));
  for (const kind of ['builtin', 'nginx'] as const) {
    const lb = await startBalancer(lab, kind, 'least-connections', replicas);
    await runLoad({ url: `${lb.url}/fast`, connections: 6, durationS: 1 });
    show(kind, await runLoad({ url: `${lb.url}/fast`, connections: 6, durationS: 2 }));
    await lab.stop(lb);
  }
} finally { await lab.close(); }
