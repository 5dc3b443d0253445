/**
 * The Traffic Lab's summary table: one row for the run (simulated or live) and one for the model
 * beside a live run, each with answers, failed, retried and p50/p95/p99 (ms). Its cells carry the
 * data-testid attributes the browser tests read.
 */
import type { SimSession } from '../../sim/engine.ts';

const $ = (id: string) => document.getElementById(id)!;

/** The run's totals so far into the summary table (`row` model: the simulator alongside a live run). */
export function summarize(session: SimSession, row: 'run' | 'model' = 'run'): void {
  const t = session.totals();
  fill(row, { answers: t.completed, failed: t.failed, retried: t.retried, ...t.latency });
}

/** Writes totals into a summary row: answers, failed and retried as counts, p50/p95/p99 in ms to 2 places. */
export function fill(
  row: 'run' | 'model',
  t: { answers: number; failed: number; retried: number; p50: number; p95: number; p99: number },
): void {
  const cells = {
    answers: String(t.answers),
    failed: String(t.failed),
    retried: String(t.retried),
    p50: t.p50.toFixed(2),
    p95: t.p95.toFixed(2),
    p99: t.p99.toFixed(2),
  };
  for (const [id, text] of Object.entries(cells)) $(`${row}-${id}`).textContent = text;
}

/** Empties a summary row ('–' in each cell), so a new run never shows the last run's totals. */
export function clearRow(row: 'run' | 'model'): void {
  for (const id of ['answers', 'failed', 'retried', 'p50', 'p95', 'p99']) $(`${row}-${id}`).textContent = '–';
}
