/**
 * Lesson 3's answers battery: the loan service with the student's verifyPassword behind
 * /member/verify-blocking, and each check sent to it and to the kit's own check on the thread pool
 * (/member/verify-pooled, crypto.scrypt) of the same service. The members (servers/lib/cpu/members.ts)
 * are stored at cheap, older parameters, so the battery takes milliseconds: a right password must
 * be verified and a wrong one refused, at each member's own salt, key length and parameters.
 */
import { formatCost, parseCost } from '../../../servers/lib/cpu/scrypt-cost.ts';
import type { FixAnswers } from '../../../results/report/answers.ts';
import { probe } from '../load/probe.ts';
import type { AnswersContext } from './spec.ts';

/** A check: a member, and a password other than their own (undefined: their own). */
interface Case {
  member: string;
  password?: string;
  why: string;
}

/** The checks, in the order sent; each names what a wrong fix would get wrong there. */
export const VERIFY_CASES: readonly Case[] = [
  { member: 'cam', why: 'own password' },
  { member: 'dee', why: 'own password, a 32-byte key' },
  { member: 'eli', why: 'own password, not ASCII' },
  { member: 'fay', why: "own password, cam's too" },
  { member: 'cam', password: 'Tr0ub4dor&3', why: "dee's password" },
  { member: 'dee', password: 'Tr0ub4dor&4', why: 'one character off' },
  { member: 'eli', password: '', why: 'an empty password' },
  { member: 'cam', why: 'own password, again' },
];

/** The battery's service runs at the --quick heavy cost, whose stored key ships (members.ts): it starts at once. */
const COST = formatCost(parseCost('N=2^15,r=8,p=4'));

/** How long a check of the student's may take: the kit's take milliseconds. */
const ANSWER_TIMEOUT_MS = 5000;

/** A check's answer in a few words: `200 verified`, `401 refused`, `500 verifyPassword() … threw: …`. */
function said(status: number, body: unknown): string {
  const b = body as { verified?: unknown; error?: unknown } | undefined;
  if (typeof b?.verified === 'boolean') return `${status} ${b.verified ? 'verified' : 'refused'}`;
  return `${status} ${typeof b?.error === 'string' ? b.error : JSON.stringify(body)}`;
}

/** The query of a case: the member, and the password when it is not their own. */
function query(c: Case): string {
  const q = new URLSearchParams({ member: c.member, ...(c.password !== undefined ? { password: c.password } : {}) });
  return q.toString();
}

/** Runs lesson 3's battery against the fix in `ctx.file`. */
export async function verifyAnswers(ctx: AnswersContext): Promise<FixAnswers> {
  ctx.progress.step("your verifyPassword's answers: 8 password checks, beside the kit's own");
  const server = await ctx.lab.start({ server: 'loan', args: ['--port', '0', '--cost', COST, '--verify', ctx.file] });
  const checks = [];
  try {
    for (const c of VERIFY_CASES) {
      const kit = await probe(`${server.url}/member/verify-pooled?${query(c)}`);
      const healthy = said(kit.status, kit.body);
      // A check of the student's that never answers (a promise never settled) is a wrong answer too.
      const yours = await probe(`${server.url}/member/verify-blocking?${query(c)}`, { timeoutMs: ANSWER_TIMEOUT_MS })
        .then((r) => said(r.status, r.body))
        .catch((err: Error) => `no answer: ${err.message}`);
      checks.push({
        request: `GET /member/verify-blocking?member=${c.member} (${c.why})`,
        healthy,
        yours,
        same: healthy === yours,
      });
    }
  } finally {
    await ctx.lab.stop(server);
  }
  return { healthyIs: "the kit's check", checks };
}
