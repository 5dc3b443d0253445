/**
 * The scrypt costs the lesson 3 experiments use, and the --cost flag they share.
 *
 * The shapes compare a light request with a heavy one, so the heavy one must stay long against
 * the scheduling noise of a busy 2-core machine (tens of ms): --quick still uses about 0.5 s of
 * scrypt (1 s with four sharing two cores), not less.
 */
import type { FlagSpec } from '../../../lib/cli.ts';
import { formatCost, HEAVY_COST, parseCost } from '../../../servers/lib/cpu/scrypt-cost.ts';

/** --quick: about 0.5 s of one core (the default heavy cost is about 1-1.5 s). */
const QUICK_HEAVY_COST = 'N=2^15,r=8,p=4';
/** Throughput sweep: a pooled request of a few tens of ms, so a 1 s step holds dozens of them. */
export const SWEEP_COST = 'N=2^14,r=8,p=1';

/** The --cost flag of an experiment. */
export const COST_FLAG = {
  type: 'string',
  valueName: 'N=..,r=..,p=..',
  description: `scrypt cost of the heavy request (default ${formatCost(HEAVY_COST)}; with --quick ${QUICK_HEAVY_COST})`,
} as const satisfies FlagSpec;

/** The heavy cost for a run: the flag if given (validated; KIT_ERR_BAD_COST), else by --quick. */
export function heavyCost(flag: unknown, quick: unknown): string {
  return formatCost(parseCost(typeof flag === 'string' ? flag : quick ? QUICK_HEAVY_COST : formatCost(HEAVY_COST)));
}
