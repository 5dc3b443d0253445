/**
 * A replica's limits (servers/replica.ts): --cpu-quota and --quota-mode, which hold it to a share
 * of a core as a container's CPU limit would, and --commit-ms, a modelled disk flush on every
 * SQLite commit. Checked here, applied when the replica is about to listen.
 */
import { intFlag } from '../../../lib/cli.ts';
import { KitError } from '../../../lib/errors.ts';
import { MAX_COMMIT_MS } from '../state/users-db.ts';
import { isPostgresUrl } from '../state/users-pg.ts';
import { holdSelfToQuota, type SelfQuota } from './self-quota.ts';
import { quotaCores, quotaMode, type QuotaMode } from './quota.ts';

/**
 * Holds this process to --cpu-quota, if given. Like lesson 8's workers, it begins once the code is
 * loaded (loading tsx and the modules at a fifth of a core would take seconds and measure nothing),
 * just before the server listens and takes over SIGTERM and SIGINT, whose clean exit removes the cgroup.
 */
export function applyQuota(limits: ReturnType<typeof limitOptions>): SelfQuota | undefined {
  if (limits.quota === undefined) return undefined;
  const quota = holdSelfToQuota(limits.quota, limits.quotaMode);
  process.stdout.write(quota.describe + '\n');
  return quota;
}

/** --cpu-quota, --quota-mode and --commit-ms, checked (KIT_ERR_USAGE naming the flag). */
export function limitOptions(flags: {
  'cpu-quota'?: string;
  'quota-mode'?: string;
  'commit-ms'?: string;
  db?: string;
}): { quota?: number; quotaMode: QuotaMode; commitMs: number } {
  const quota = quotaCores(flags['cpu-quota']);
  if (flags['quota-mode'] !== undefined && quota === undefined)
    throw new KitError('KIT_ERR_USAGE', '--quota-mode only means something with --cpu-quota');
  const mode = quotaMode(flags['quota-mode']);
  if (flags['commit-ms'] !== undefined && (flags.db === undefined || isPostgresUrl(flags.db)))
    throw new KitError(
      'KIT_ERR_USAGE',
      '--commit-ms only means something with a SQLite --db (PostgreSQL flushes for real)',
    );
  return { quota, quotaMode: mode, commitMs: intFlag('commit-ms', flags['commit-ms'], 0, MAX_COMMIT_MS, 0) };
}
