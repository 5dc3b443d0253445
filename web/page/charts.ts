/**
 * The page's time series, one point per second (simulated, or measured in live mode), drawn with uPlot: throughput (req/s),
 * latency (p50/p95/p99, ms) and trouble (failed answers and retried requests per second). Only
 * the last WINDOW_S seconds are kept, so a long run's page does not grow.
 */
import uPlot from 'uplot';

/** One second on the charts: simulated (runner.ts) or measured in live mode (live-settings.ts LiveSecond). */
interface ChartPoint {
  second: number;
  /** Answers in the second, req/s. */
  throughput: number;
  latency?: { p50: number; p95: number; p99: number } | null;
  failed: number;
  retried: number;
  /** In live mode: the simulator's second for the same settings, run alongside (its curves are dashed). */
  model?: ChartPoint | null;
}

/** Seconds of history on the charts. */
const WINDOW_S = 600;
/** Each chart's width, px: three side by side on a laptop screen, one under another on a narrow one. */
const CHART_WIDTH = 400;

interface ChartSpec {
  title: string;
  unit: string;
  series: { label: string; color: string; value: (p: ChartPoint) => number | null; model?: true }[];
}

/** The model's dashed twin of a series: the same value, read from the point's `model`. */
const modelOf = (label: string, color: string, value: (p: ChartPoint) => number | null) => ({
  label: `${label} (model)`,
  color,
  model: true as const,
  value: (p: ChartPoint) => (p.model ? value(p.model) : null),
});

const SPECS: ChartSpec[] = [
  {
    title: 'throughput',
    unit: 'req/s',
    series: [
      { label: 'answers/s', color: '#2563eb', value: (p) => p.throughput },
      modelOf('answers/s', '#2563eb', (p) => p.throughput),
    ],
  },
  {
    title: 'latency',
    unit: 'ms',
    series: [
      { label: 'p50', color: '#16a34a', value: (p) => p.latency?.p50 ?? null },
      { label: 'p95', color: '#d97706', value: (p) => p.latency?.p95 ?? null },
      { label: 'p99', color: '#dc2626', value: (p) => p.latency?.p99 ?? null },
      modelOf('p95', '#d97706', (p) => p.latency?.p95 ?? null),
    ],
  },
  {
    title: 'failed and retried',
    unit: 'per s',
    series: [
      { label: 'failed', color: '#dc2626', value: (p) => p.failed },
      { label: 'retried', color: '#7c3aed', value: (p) => p.retried },
      modelOf('retried', '#7c3aed', (p) => p.retried),
    ],
  },
];

export class Charts {
  private readonly plots: { plot: uPlot; spec: ChartSpec; data: (number | null)[][] }[] = [];

  constructor(container: HTMLElement) {
    for (const spec of SPECS) {
      const box = document.createElement('div');
      box.className = 'chart';
      box.dataset.chart = spec.title;
      container.append(box);
      const data: (number | null)[][] = [[], ...spec.series.map(() => [])];
      const plot = new uPlot(
        {
          title: `${spec.title} (${spec.unit})`,
          width: CHART_WIDTH,
          height: 180,
          scales: { x: { time: false } },
          axes: [{ label: 's' }, {}],
          series: [
            { label: 's' },
            ...spec.series.map((s) => ({
              label: s.label,
              stroke: s.color,
              width: 1.5,
              ...(s.model ? { dash: [6, 4], show: false } : {}),
            })),
          ],
        },
        data as uPlot.AlignedData,
        box,
      );
      this.plots.push({ plot, spec, data });
    }
  }

  /** Adds one second to every chart (dropping the oldest past WINDOW_S). */
  add(p: ChartPoint): void {
    for (const c of this.plots) {
      c.data[0]!.push(p.second + 1);
      c.spec.series.forEach((s, i) => c.data[i + 1]!.push(s.value(p)));
      if (c.data[0]!.length > WINDOW_S) for (const col of c.data) col.shift();
    }
  }

  /** Draws what was added since the last draw (once per frame at most). */
  draw(): void {
    for (const c of this.plots) c.plot.setData(c.data as uPlot.AlignedData);
  }

  /** Shows or hides the model's dashed curves (live mode with the simulator alongside). */
  showModel(on: boolean): void {
    for (const c of this.plots) c.spec.series.forEach((s, i) => s.model && c.plot.setSeries(i + 1, { show: on }));
  }

  clear(): void {
    for (const c of this.plots) {
      for (const col of c.data) col.length = 0;
      c.plot.setData(c.data as uPlot.AlignedData);
    }
  }
}
