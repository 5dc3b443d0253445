/** The flags both balancers (the built-in one and nginx) take, and their checks. */
import { KitError } from '../../lib/errors.ts';
import { intFlag, type FlagSpecs } from '../../lib/cli.ts';
import { isPolicy, POLICIES, type Policy } from './policies.ts';

/** --policy, --upstream, --port and --keepalive, with `defaultPort`. */
export function balancerFlags(defaultPort: number) {
  return {
    policy: { type: 'string', valueName: 'policy', description: `one of ${POLICIES.join(', ')}`, default: 'round-robin' },
    upstream: { type: 'string', valueName: 'host:port,...', description: 'the replicas, on loopback (name=host:port to name one)' },
    port: { type: 'string', valueName: 'n', description: 'port to listen on, 0 for any free port', default: String(defaultPort) },
    keepalive: { type: 'string', valueName: 'on|off', description: 'keep upstream connections open between requests', default: 'on' },
  } as const satisfies FlagSpecs;
}

export interface BalancerOptions {
  policy: Policy;
  upstreams: { name: string; addr: string }[];
  port: number;
  keepAlive: boolean;
}

/** Checks the balancer flags; throws KIT_ERR_USAGE naming the bad one. */
export function balancerOptions(flags: { policy?: string; upstream?: string; port?: string; keepalive?: string }, defaultPort: number): BalancerOptions {
  const policy = flags.policy ?? 'round-robin';
  if (!isPolicy(policy)) throw new KitError('KIT_ERR_USAGE', `unknown policy '${policy}': pick one of ${POLICIES.join(', ')}`);
  if (flags.keepalive !== 'on' && flags.keepalive !== 'off') throw new KitError('KIT_ERR_USAGE', `--keepalive is on or off; got '${flags.keepalive}'`);
  return { policy, upstreams: parseUpstreamList(flags.upstream), port: intFlag('port', flags.port, 0, 65535, defaultPort), keepAlive: flags.keepalive === 'on' };
}

/**
 * Parses comma-separated `[name=]host:port` items; hosts must be loopback (127.x.x.x or
 * localhost), since the kit never sends load anywhere else. Throws KIT_ERR_USAGE.
 */
export function parseUpstreamList(text: string | undefined): { name: string; addr: string }[] {
  if (!text) throw new KitError('KIT_ERR_USAGE', '--upstream is required: the replicas as host:port,host:port');
  return text.split(',').map((item, i) => {
    const m = /^(?:([\w.-]+)=)?(127\.\d+\.\d+\.\d+|localhost):(\d{1,5})$/.exec(item.trim());
    if (!m || Number(m[3]) < 1 || Number(m[3]) > 65535) {
      throw new KitError('KIT_ERR_USAGE', `bad upstream '${item}': write host:port with a loopback host (127.x.x.x), e.g. 127.0.0.1:3010`);
    }
    return { name: m[1] ?? `upstream${i + 1}`, addr: `${m[2]}:${m[3]}` };
  });
}
