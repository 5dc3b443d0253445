/**
 * Which OS the kit runs on, and the one check for native Windows. The kit's lab stops its servers
 * by process group, freezes them with SIGSTOP/SIGCONT, faults them with SIGUSR1/SIGUSR2 and drains
 * them on SIGTERM; native Windows has none of these (Node emulates only a kill), so a run that
 * starts servers stops there before it starts anything, with one line that says to use WSL2.
 * The simulator, compare, the roll-up and the Traffic Lab's simulation mode start no server and
 * work everywhere.
 */
import { KitError } from './errors.ts';

/**
 * The OS: process.platform, or NSL_PLATFORM where a test plays another one (`win32`, `darwin`).
 * Nothing else reads NSL_PLATFORM.
 */
export function kitPlatform(env: NodeJS.ProcessEnv = process.env): NodeJS.Platform {
  return (env.NSL_PLATFORM as NodeJS.Platform | undefined) || process.platform;
}

/** The sentence KIT_ERR_NEEDS_WSL carries, for `what` (e.g. "ceiling", "a live run"). */
export function needsWslMessage(what: string): string {
  return `${what} starts servers and stops, freezes and drains them with POSIX signals, which native Windows does not have`;
}

/** What to do instead, on native Windows. */
export const WSL_HINT =
  'run the kit inside WSL2 (README, "Setting up your machine"); the simulator, compare, the roll-up and the Traffic Lab\'s simulation mode work here';

/** Throws KIT_ERR_NEEDS_WSL on native Windows (see the header); does nothing elsewhere. */
export function assertSignals(what: string, env: NodeJS.ProcessEnv = process.env): void {
  if (kitPlatform(env) === 'win32') throw new KitError('KIT_ERR_NEEDS_WSL', needsWslMessage(what), WSL_HINT);
}
