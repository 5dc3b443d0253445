/** The flags both balancers (the kit's own and nginx) take, and their checks. */
import path from 'node:path';
import { KitError } from '../../../lib/errors.ts';
import { intFlag, type FlagSpecs } from '../../../lib/cli.ts';
import { FAILOVER_DEFAULTS } from '../../../core/failover.ts';
import { BALANCER_POLICIES, isBalancerPolicy, type BalancerPolicy } from '../../../core/policies.ts';

/** --policy, --upstream, --port, --keepalive and the failover flags, with `defaultPort`. */
export function balancerFlags(defaultPort: number) {
  return {
    policy: {
      type: 'string',
      valueName: 'policy',
      description: `one of ${BALANCER_POLICIES.join(', ')}`,
      default: 'round-robin',
    },
    upstream: {
      type: 'string',
      valueName: 'host:port,...',
      description: 'the replicas, on loopback (name=host:port to name one)',
    },
    port: {
      type: 'string',
      valueName: 'n',
      description: 'port to listen on, 0 for any free port',
      default: String(defaultPort),
    },
    keepalive: {
      type: 'string',
      valueName: 'on|off',
      description: 'keep upstream connections open between requests',
      default: 'on',
    },
    retries: {
      type: 'string',
      valueName: 'n',
      description: 'tries on other replicas after a failed one (0: no retries)',
      default: String(FAILOVER_DEFAULTS.retries),
    },
    'max-fails': {
      type: 'string',
      valueName: 'n',
      description: 'failures within --fail-timeout that make a replica rest (0: no passive health checks)',
      default: String(FAILOVER_DEFAULTS.maxFails),
    },
    'fail-timeout': {
      type: 'string',
      valueName: 's',
      description: 'the window for --max-fails, and how long a failed replica rests, whole seconds (as nginx takes it)',
      default: String(FAILOVER_DEFAULTS.failTimeoutMs / 1000),
    },
    'connect-timeout': {
      type: 'string',
      valueName: 'ms',
      description: 'give up connecting to a replica after this long',
      default: String(FAILOVER_DEFAULTS.connectTimeoutMs),
    },
    'response-timeout': {
      type: 'string',
      valueName: 'ms',
      description: "give up waiting for a replica's answer after this long (504)",
      default: String(FAILOVER_DEFAULTS.responseTimeoutMs),
    },
    'access-log': {
      type: 'string',
      valueName: 'file',
      description:
        "append a line per forwarded request to this file: the replicas tried, their statuses and times (nginx's variables; servers/lib/balancer/access-log.ts)",
    },
  } as const satisfies FlagSpecs;
}

export { FAILOVER_DEFAULTS };

export interface FailoverOptions {
  /** Tries after the first one, each on a replica not tried yet. */
  retries: number;
  maxFails: number;
  failTimeoutMs: number;
  connectTimeoutMs: number;
  responseTimeoutMs: number;
}

export interface BalancerOptions extends FailoverOptions {
  policy: BalancerPolicy;
  upstreams: { name: string; addr: string }[];
  port: number;
  keepAlive: boolean;
  /** Absolute path of the access log, when one is asked for. */
  accessLog?: string;
  /**
   * How power of two choices samples its two replicas: two distinct ones (the default), or with
   * replacement, so that both samples may be the same replica (the kit's balancer only; lesson 4,
   * exercise 1).
   */
  twoChoices?: TwoChoicesSampling;
}

const TWO_CHOICES_SAMPLING = ['distinct', 'with-replacement'] as const;
export type TwoChoicesSampling = (typeof TWO_CHOICES_SAMPLING)[number];

/** --two-choices, checked: distinct or with-replacement; throws KIT_ERR_USAGE otherwise. */
export function twoChoicesSampling(value: string | undefined): TwoChoicesSampling {
  const v = value ?? 'distinct';
  if (!(TWO_CHOICES_SAMPLING as readonly string[]).includes(v))
    throw new KitError('KIT_ERR_USAGE', `--two-choices is ${TWO_CHOICES_SAMPLING.join(' or ')}; got '${v}'`);
  return v as TwoChoicesSampling;
}

type BalancerFlagValues = {
  policy?: string;
  upstream?: string;
  port?: string;
  keepalive?: string;
  retries?: string;
  'max-fails'?: string;
  'fail-timeout'?: string;
  'connect-timeout'?: string;
  'response-timeout'?: string;
  'access-log'?: string;
};

/** Checks the balancer flags; throws KIT_ERR_USAGE naming the bad one. */
export function balancerOptions(flags: BalancerFlagValues, defaultPort: number): BalancerOptions {
  const policy = flags.policy ?? 'round-robin';
  if (!isBalancerPolicy(policy))
    throw new KitError('KIT_ERR_USAGE', `unknown policy '${policy}': pick one of ${BALANCER_POLICIES.join(', ')}`);
  if (flags.keepalive !== 'on' && flags.keepalive !== 'off')
    throw new KitError('KIT_ERR_USAGE', `--keepalive is on or off; got '${flags.keepalive}'`);
  const d = FAILOVER_DEFAULTS;
  return {
    policy,
    upstreams: parseUpstreamList(flags.upstream),
    port: intFlag('port', flags.port, 0, 65535, defaultPort),
    keepAlive: flags.keepalive === 'on',
    retries: intFlag('retries', flags.retries, 0, 10, d.retries),
    maxFails: intFlag('max-fails', flags['max-fails'], 0, 100, d.maxFails),
    failTimeoutMs: 1000 * intFlag('fail-timeout', flags['fail-timeout'], 1, 600, d.failTimeoutMs / 1000),
    connectTimeoutMs: intFlag('connect-timeout', flags['connect-timeout'], 1, 600_000, d.connectTimeoutMs),
    responseTimeoutMs: intFlag('response-timeout', flags['response-timeout'], 1, 600_000, d.responseTimeoutMs),
    ...(flags['access-log'] !== undefined ? { accessLog: accessLogPath(flags['access-log']) } : {}),
  };
}

/**
 * --access-log's file as an absolute path. It goes into nginx's config as one quoted word, so
 * characters that would end or extend that word (quotes, ;, braces, $, a backslash, a line break)
 * are refused with KIT_ERR_USAGE.
 */
export function accessLogPath(text: string): string {
  if (text === '' || /["'`;{}$\\\s]/.test(text)) {
    throw new KitError(
      'KIT_ERR_USAGE',
      `--access-log takes a file path without spaces, quotes, ;, braces, $ or backslashes; got '${text}'`,
    );
  }
  return path.resolve(text);
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
      throw new KitError(
        'KIT_ERR_USAGE',
        `bad upstream '${item}': write host:port with a loopback host (127.x.x.x), e.g. 127.0.0.1:3010`,
      );
    }
    return { name: m[1] ?? `upstream${i + 1}`, addr: `${m[2]}:${m[3]}` };
  });
}

/**
 * Idle upstream connections are closed after this many ms: shorter than Node's 5 s
 * server.keepAliveTimeout, so the balancer never reuses a connection the replica is closing
 * (which would surface as a reset; Node docs, http.Server keepAliveTimeout).
 */
export const UPSTREAM_IDLE_MS = 4000;
