/**
 * The class roll-up as one self-contained HTML file (`measure/rollup.ts --html <file>`), for a
 * projector: the machines, each experiment's shape lines by student, and per experiment a chart
 * of each measure behind its shape (results/measures.ts), every run a point and the shape's
 * threshold a line. uPlot and its CSS are inlined, so the file opens with no network.
 *
 * Everything in it comes from students' files, so every string is HTML-escaped, the data goes in
 * as JSON with `<` escaped, and a Content-Security-Policy allows only the page's own inline script
 * and style: a crafted student name or experiment field cannot run code.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Measure } from '../../results/measures.ts';
import { failures, lineRows, machineRows, studentsAndExperiments, type Rollup } from './rollup.ts';

/** One chart: a measure of one experiment, each run's value by student. */
export interface ChartData {
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
      if (!c) charts.set(key, (c = { experiment: run.experiment, id: m.id, label: m.label, unit: m.unit, ...(m.threshold !== undefined ? { threshold: m.threshold } : {}), points: [] }));
      c.points.push({ student: run.student, value: m.value });
    }
  }
  return [...charts.values()];
}

/** A roll-up cell (rollup.ts's cell) as a table cell, coloured by its mark. */
function cellHtml(text: string): string {
  const kind = text.startsWith('✗') ? 'bad' : text === '–' ? 'na' : text === '✓' ? 'ok' : '';
  return `<td${kind ? ` class="${kind}"` : ''}>${escapeHtml(text)}</td>`;
}

/** The page's own script: one uPlot chart per ChartData, students along x, runs as points. */
const PAGE_SCRIPT = `
const data = JSON.parse(document.getElementById('rollup-data').textContent);
for (const c of data.charts) {
  const host = document.getElementById('chart-' + c.index);
  const students = data.students;
  const runs = Math.max(1, ...students.map((s) => c.points.filter((p) => p.student === s).length));
  const xs = students.map((_, i) => i);
  const series = [{ label: 'student', value: (u, v) => (v == null ? '--' : students[v] ?? '') }];
  const columns = [xs];
  for (let k = 0; k < runs; k++) {
    columns.push(students.map((s) => { const p = c.points.filter((q) => q.student === s)[k]; return p ? p.value : null; }));
    series.push({ label: 'run ' + (k + 1), stroke: ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd'][k % 4], paths: () => null, points: { show: true, size: 9 } });
  }
  if (c.threshold !== undefined) {
    columns.push(xs.map(() => c.threshold));
    series.push({ label: 'shape threshold', stroke: '#d62728', dash: [6, 4], points: { show: false } });
  }
  new uPlot({
    width: 560, height: 220,
    scales: { x: { time: false, range: [-0.5, Math.max(0.5, students.length - 0.5)] } },
    axes: [
      { splits: () => xs, values: (u, splits) => splits.map((i) => students[i] ?? '') },
      { label: c.unit },
    ],
    series,
  }, columns, host);
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
  const body: string[] = [`<h1>Class roll-up</h1>`, `<p>${students.length} student(s), ${r.runs.length} run(s), ${r.skipped.length} file(s) skipped.</p>`];
  body.push('<h2>Machines</h2><table><tr><th>student</th><th>cores</th><th>busy before (worst)</th><th>Node</th><th>platform</th><th>nginx</th><th>Redis</th><th>runs</th></tr>');
  for (const m of machineRows(r, students)) {
    body.push(`<tr><td>${escapeHtml(m.student)}</td><td>${Number(m.cores)}</td><td>${m.busy.toFixed(2)}</td><td>${escapeHtml(m.nodes)}</td><td>${escapeHtml(m.platform)}</td><td>${escapeHtml(m.nginx)}</td><td>${escapeHtml(m.redis)}</td><td>${m.runs}</td></tr>`);
  }
  body.push('</table>');
  const indexed = charts.map((c, index) => ({ ...c, index }));
  for (const experiment of experiments) {
    body.push(`<h2>${escapeHtml(experiment)}</h2><table><tr><th>shape line</th>${students.map((s) => `<th>${escapeHtml(s)}</th>`).join('')}</tr>`);
    for (const row of lineRows(r, experiment, expected, students)) body.push(`<tr><td class="line">${escapeHtml(row.key)}</td>${row.cells.map(cellHtml).join('')}</tr>`);
    body.push('</table>');
    for (const c of indexed.filter((x) => x.experiment === experiment)) {
      body.push(`<figure><figcaption>${escapeHtml(c.label)} (${escapeHtml(c.unit)})${c.threshold !== undefined ? `; the shape's threshold: ${c.threshold}` : ''}</figcaption><div id="chart-${c.index}"></div></figure>`);
    }
  }
  const failed = failures(r);
  if (failed.length) {
    body.push('<h2>Lines that did not hold</h2><ul>');
    for (const f of failed) body.push(`<li>${escapeHtml(f.text)}${f.hint ? `<br><small>likely cause: ${escapeHtml(f.hint)}</small>` : ''}</li>`);
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
body{font:15px system-ui,sans-serif;margin:2rem;max-width:70rem}table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #ccc;padding:.2rem .5rem}
td.ok{color:#1a7f37;text-align:center}td.bad{color:#cf222e;font-weight:bold;text-align:center}td.na{color:#888;text-align:center}td.line{font-family:monospace}
figure{display:inline-block;margin:.5rem 1rem .5rem 0}figcaption{font-size:13px;max-width:560px}</style>
</head><body>
${body.join('\n')}
<script type="application/json" id="rollup-data">${data}</script>
<script>${LANGUAGE_GUARD}</script>
<script>${uplotJs}</script>
<script>${PAGE_SCRIPT}</script>
</body></html>
`;
}
