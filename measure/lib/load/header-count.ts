/** Counting a load's answers by one of their headers (load.ts's countHeader). */
import type { EventEmitter } from 'node:events';

/**
 * Counts answers by one header: each autocannon client's parsed headers (its 'headers' event,
 * with http-parser-js's flat [name, value, ...] list) mark its current answer, which is counted
 * when it completes (the 'response' event), so the count covers the same answers as the others.
 */
export function headerCounter(spec: { name: string; pattern: RegExp }) {
  const marked = new WeakSet<object>();
  let n = 0;
  return {
    setup(client: EventEmitter): void {
      client.on('headers', (info: { headers?: string[] }) => {
        const list = info.headers ?? [];
        let hit = false;
        for (let i = 0; i + 1 < list.length; i += 2)
          if (list[i]!.toLowerCase() === spec.name && spec.pattern.test(list[i + 1]!)) hit = true;
        if (hit) marked.add(client);
        else marked.delete(client);
      });
    },
    answered(client: unknown): void {
      if (typeof client === 'object' && client !== null && marked.delete(client)) n++;
    },
    count: () => n,
  };
}
