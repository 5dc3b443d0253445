/**
 * The class roll-up as one self-contained HTML file (`measure/rollup.ts --html <file>`), for a
 * projector at 1,400 × 900: a class summary first (per experiment, how many students held every
 * line, and the lines some did not), the graded exercises, each experiment's shape lines by
 * student beside the value each line should read, and per experiment a chart of each measure
 * behind its shape (results/report/measures.ts), page-wide, every run a point and the shape's threshold
 * a dashed line. The y axes start at zero, so that 269 ms against 273 ms looks as close as it is,
 * and each chart's key names only what it draws. uPlot and its CSS are inlined, so the file opens
 * with no network.
 *
 * Everything in it comes from students' files, so every string is HTML-escaped, the data goes in
 * as JSON with `<` escaped, and a Content-Security-Policy allows only the page's own inline script
 * and style: a crafted student name or experiment field cannot run code.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Measure } from '../../../results/report/measures.ts';
import type { Rollup } from './rollup.ts';
import {
  classSummary,
  failures,
  gradedRows,
  headline,
  lineRows,
  machineRows,
  studentsAndExperiments,
} from './rollup-rows.ts';

/** One chart: a measure of one experiment, each run's value by student. */
interface ChartData {
  experiment: string;
  id: string;
  label: string;
  unit: string;
  threshold?: number;
  points: { student: string; value: number }[];
}

const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The charts' data: for each experiment, each measure id its runs report, in first-seen order. */
export function chartData(r: Rollup, measuresOf: (experiment: string, result: unknown) => Measure[]): ChartData[] {
  const charts = new Map<string, ChartData>();
  for (const run of r.runs) {
    for (const m of measuresOf(run.experiment, run.result)) {
      const key = `${run.experiment}\u0000${m.id}`;
      let c = charts.get(key);
      if (!c)
        charts.set(
          key,
          (c = {
            experiment: run.experiment,
            id: m.id,
            label: m.label,
            unit: m.unit,
            ...(m.threshold !== undefined ? { threshold: m.threshold } : {}),
            points: [],
          }),
        );
      c.points.push({ student: run.student, value: m.value });
    }
  }
  return [...charts.values()];
}

/**
 * A roll-up cell (rollup.ts's cell, or a graded exercise's) as a table cell, coloured by its mark;
 * `reads` (what failing runs read instead of the expected value) goes under a ✗.
 */
function cellHtml(text: string, reads: readonly string[] = []): string {
  // A graded exercise's attempts are listed in order: the last one colours the cell.
  const last = text.split(', ').at(-1) ?? '';
  const kind = last.startsWith('✗') ? 'bad' : last === '–' ? 'na' : last === '✓' ? 'ok' : '';
  const read = reads.length ? `<br><small>read: ${reads.map(escapeHtml).join(', ')}</small>` : '';
  return `<td${kind ? ` class="${kind}"` : ''}>${escapeHtml(text)}${read}</td>`;
}

/** The class summary and the graded exercises, for the top of the page. */
function summaryHtml(r: Rollup, expected: Map<string, string[]>, students: readonly string[]): string[] {
  const body: string[] = [];
  const summary = classSummary(r, expected);
  if (summary.length) {
    body.push(
      '<h2>Class summary</h2><table class="summary"><tr><th>experiment</th><th>held every line</th><th>lines some students did not hold</th></tr>',
    );
    for (const x of summary) {
      const weak = x.weak.map((w) => `${escapeHtml(w.key)}: held by ${w.held} of ${w.of}`).join('<br>');
      body.push(
        `<tr><td>${escapeHtml(x.experiment)}</td><td class="${x.heldAll === x.students ? 'ok' : 'bad'}">${x.heldAll} of ${x.students}</td><td class="line">${weak || 'none'}</td></tr>`,
      );
    }
    body.push('</table>');
  }
  const graded = gradedRows(r, students);
  if (graded.length) {
    body.push(
      `<h2>Graded exercises</h2><p class="key">✓ right, ✗ wrong (a number: too low or too high), – not counted on that machine; a student's attempts in order.</p>`,
    );
    body.push(
      `<table><tr><th>exercise</th><th>right</th>${students.map((s) => `<th>${escapeHtml(s)}</th>`).join('')}</tr>`,
    );
    for (const row of graded)
      body.push(
        `<tr><td>${escapeHtml(`${row.id} ${row.title}`)}</td><td>${row.right} of ${row.of}</td>${row.cells.map((c) => cellHtml(c)).join('')}</tr>`,
      );
    body.push('</table>');
  }
  return body;
}

/**
 * The page's own script: one uPlot chart per ChartData, as wide as the page, students along x,
 * runs as points, the y axis from zero (or below it, for a negative value). uPlot's own legend is
 * off (with points only and no cursor it shows empty "--" rows); a key under each chart names the
 * runs and the threshold it draws. The y axis's lower end goes on the chart's element
 * (data-ymin), where a test reads it.
 */
const PAGE_SCRIPT = `
const data = JSON.parse(document.getElementById('rollup-data').textContent);
const COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd'];
for (const c of data.charts) {
  const host = document.getElementById('chart-' + c.index);
  const students = data.students;
  const runs = Math.max(1, ...students.map((s) => c.points.filter((p) => p.student === s).length));
  const xs = students.map((_, i) => i);
  const series = [{}];
  const columns = [xs];
  const key = [];
  for (let k = 0; k < runs; k++) {
    columns.push(students.map((s) => { const p = c.points.filter((q) => q.student === s)[k]; return p ? p.value : null; }));
    series.push({ stroke: COLORS[k % 4], paths: () => null, points: { show: true, size: 11, fill: COLORS[k % 4] } });
    key.push(['dot', COLORS[k % 4], runs > 1 ? "each student's run " + (k + 1) : 'each student']);
  }
  if (c.threshold !== undefined) {
    columns.push(xs.map(() => c.threshold));
    series.push({ stroke: '#d62728', width: 2, dash: [8, 5], points: { show: false } });
    key.push(['dash', '#d62728', "the shape's threshold, " + c.threshold]);
  }
  const values = columns.slice(1).flat().filter((v) => v != null);
  const top = Math.max(0, ...values), bottom = Math.min(0, ...values);
  new uPlot({
    width: host.clientWidth, height: 240,
    legend: { show: false },
    cursor: { show: false },
    scales: {
      x: { time: false, range: [-0.5, Math.max(0.5, students.length - 0.5)] },
      y: { range: [bottom < 0 ? bottom * 1.1 : 0, top > 0 ? top * 1.1 : 1] },
    },
    axes: [
      { splits: () => xs, values: (u, splits) => splits.map((i) => students[i] ?? '') },
      { label: c.unit, size: 70 },
    ],
    series,
    hooks: { draw: [(u) => { host.dataset.ymin = String(u.scales.y.min); }] },
  }, columns, host);
  const legend = document.createElement('p');
  legend.className = 'key';
  for (const [shape, color, text] of key) {
    const item = document.createElement('span');
    const mark = document.createElement('i');
    mark.className = shape;
    mark.style.borderColor = color;
    if (shape === 'dot') mark.style.background = color;
    item.append(mark, text);
    legend.append(item);
  }
  host.after(legend);
}
`;

/**
 * Runs before uPlot, which formats numbers with `new Intl.NumberFormat(navigator.language)` and
 * throws on a tag that is not BCP 47: WebKitGTK with LANG=C.UTF-8 reports "C" (as the
 * Traffic Lab's web/page/locale.ts explains). Such a browser gets "en-US".
 */
const LANGUAGE_GUARD = `try{Intl.getCanonicalLocales(navigator.language)}catch(e){Object.defineProperty(navigator,'language',{value:'en-US',configurable:true})}`;

/** The whole page. `charts` from chartData; uPlot is read from node_modules and inlined. */
export function renderRollupHtml(r: Rollup, expected: Map<string, string[]>, charts: ChartData[]): string {
  const req = createRequire(import.meta.url);
  const uplotJs = readFileSync(req.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8');
  const uplotCss = readFileSync(req.resolve('uplot/dist/uPlot.min.css'), 'utf8');
  const { students, experiments } = studentsAndExperiments(r);
  const body: string[] = [
    `<h1>Class roll-up</h1>`,
    `<p>${escapeHtml(headline(r))}.</p>`,
    ...summaryHtml(r, expected, students),
  ];
  body.push(
    '<h2>Machines</h2><table><tr><th>student</th><th>cores</th><th>busy before (worst)</th><th>Node</th><th>platform</th><th>nginx</th><th>Redis</th><th>runs</th></tr>',
  );
  for (const m of machineRows(r, students)) {
    body.push(
      `<tr><td>${escapeHtml(m.student)}</td><td>${Number(m.cores)}</td><td>${m.busy.toFixed(2)}</td><td>${escapeHtml(m.nodes)}</td><td>${escapeHtml(m.platform)}</td><td>${escapeHtml(m.nginx)}</td><td>${escapeHtml(m.redis)}</td><td>${m.runs}</td></tr>`,
    );
  }
  body.push('</table>');
  const indexed = charts.map((c, index) => ({ ...c, index }));
  for (const experiment of experiments) {
    body.push(
      `<h2>${escapeHtml(experiment)}</h2><table><tr><th>shape line</th><th>expected</th>${students.map((s) => `<th>${escapeHtml(s)}</th>`).join('')}</tr>`,
    );
    for (const row of lineRows(r, experiment, expected, students)) {
      body.push(
        `<tr><td class="line">${escapeHtml(row.key)}</td><td class="line">${escapeHtml(row.expected)}</td>${row.cells.map((c, i) => cellHtml(c, row.reads[i])).join('')}</tr>`,
      );
    }
    body.push('</table>');
    for (const c of indexed.filter((x) => x.experiment === experiment)) {
      body.push(
        `<figure><figcaption>${escapeHtml(c.label)} (${escapeHtml(c.unit)})</figcaption><div class="chart" id="chart-${c.index}"></div></figure>`,
      );
    }
  }
  const failed = failures(r);
  if (failed.length) {
    body.push('<h2>Lines that did not hold</h2><ul>');
    for (const f of failed)
      body.push(
        `<li>${escapeHtml(f.text)}${f.hint ? `<br><small>likely cause: ${escapeHtml(f.hint)}</small>` : ''}</li>`,
      );
    body.push('</ul>');
  }
  if (r.skipped.length) {
    body.push('<h2>Skipped files</h2><ul>');
    for (const s of r.skipped) body.push(`<li>${escapeHtml(`${s.file}: ${s.reason}`)}</li>`);
    body.push('</ul>');
  }
  const data = JSON.stringify({ students, charts: indexed }).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'">
<title>Class roll-up · node-scaling-lab</title>
<style>${uplotCss}
body{font:17px system-ui,sans-serif;margin:1.5rem 2rem}table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #ccc;padding:.25rem .6rem;vertical-align:top}
td.ok{color:#1a7f37;text-align:center}td.bad{color:#cf222e;font-weight:bold;text-align:center}td.na{color:#888;text-align:center}td.line{font-family:monospace;white-space:pre-wrap}
td small{font-weight:normal}figure{display:block;margin:1rem 0}figcaption{font-size:16px;font-weight:600}.chart{width:100%}
.key{font-size:14px;color:#444;margin:.2rem 0}.key span{margin-right:1.5rem;white-space:nowrap}.key i{display:inline-block;vertical-align:middle;margin-right:.4rem}
.key i.dot{width:10px;height:10px;border-radius:50%;border:1px solid}.key i.dash{width:22px;height:0;border-top:2px dashed}</style>
</head><body>
${body.join('\n')}
<script type="application/json" id="rollup-data">${data}</script>
<script>${LANGUAGE_GUARD}</script>
<script>${uplotJs}</script>
<script>${PAGE_SCRIPT}</script>
</body></html>
`;
}
