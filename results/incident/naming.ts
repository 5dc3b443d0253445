/**
 * Naming an incident: which one a seed plants, the line each one turns and what it reads then,
 * the report each comes from, and the verdict on a student's name for it.
 */
import { splitLine } from '../report/shape.ts';
import { INCIDENT_NAMES, type IncidentName } from './result.ts';

/** Each incident's shape line (its key) and what that line reads when the incident is planted. */
export const SYMPTOMS: Record<IncidentName, { line: string; symptom: string }> = {
  redos: { line: 'loop-under-search', symptom: 'busy' },
  pool: { line: 'cover-reads-during-export', symptom: 'wait' },
  keepalive: { line: 'idle-close', symptom: 'before-balancer' },
  shutdown: { line: 'shutdown-under-keep-alive', symptom: 'hangs' },
  cache: { line: 'heap-under-new-pages', symptom: 'grows' },
  'sync-read': { line: 'loop-under-books', symptom: 'busy' },
};

/** What each incident's line reads on a healthy service (expected-output/incident.txt). */
const HEALTHY: Record<string, string> = {
  'loop-under-search': 'calm',
  'cover-reads-during-export': 'at-once',
  'idle-close': 'after-balancer',
  'shutdown-under-keep-alive': 'completes',
  'heap-under-new-pages': 'flat',
  'loop-under-books': 'calm',
};

/** Where each incident was reported (the planted file says more). */
const REPORTS: Record<IncidentName, string> = {
  redos: 'markedjs/marked#1070, nodejs/node#9337',
  pool: 'nodejs/help#4290, nodejs/node#17047',
  keepalive: 'nodejs/node#27363',
  shutdown: 'nodejs/node#2642',
  cache: 'imgproxy/imgproxy-node#10',
  'sync-read': 'rcruzper/express-actuator#49',
};

/**
 * The incident seed `seed` plants: a hash of it, so that neighbouring seeds do not walk through
 * the list in order and the number says nothing of the name.
 */
export function seedIncident(seed: number): IncidentName {
  let h = Math.imul(seed, 2654435761) >>> 0; // Knuth's multiplicative hash
  h = (h ^ (h >>> 16)) >>> 0; // XOR gives a signed 32-bit integer: back to unsigned
  return INCIDENT_NAMES[h % INCIDENT_NAMES.length]!;
}

/** What a line of `lines` (a run's shape) reads for `key`, or undefined. */
function reads(lines: readonly string[], key: string): string | undefined {
  for (const l of lines) {
    const { key: k, verdict } = splitLine(l);
    if (k === `incident  ${key}`) return verdict;
  }
  return undefined;
}

/**
 * The verdict on naming `planted` as `guess`, from the run's shape: right, or which measure says
 * otherwise (the guess's own line, which does not read its symptom here).
 */
export function nameVerdict(
  planted: IncidentName,
  guess: IncidentName,
  lines: readonly string[],
): { right: boolean; text: string } {
  if (guess === planted)
    return {
      right: true,
      text: `Right: it is ${planted} (reported in ${REPORTS[planted]}): ${SYMPTOMS[planted].line} reads ${reads(lines, SYMPTOMS[planted].line) ?? 'nothing'}, where a healthy service's reads ${HEALTHY[SYMPTOMS[planted].line]}. Now fix it: make incident-fix NAME=${planted}`,
    };
  const s = SYMPTOMS[guess];
  return {
    right: false,
    text: `Not ${guess}: that one makes ${s.line} read ${s.symptom}, and here it reads ${reads(lines, s.line) ?? 'nothing'}. Read the phases again against a healthy service's (the lesson's numbers).`,
  };
}
