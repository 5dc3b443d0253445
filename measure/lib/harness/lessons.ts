/**
 * The course: which experiments each lesson runs, in order, and where its text is. The README's
 * lesson list, the Makefile's lesson-N targets and the tests all follow this list.
 */
interface Lesson {
  id: number;
  slug: string;
  title: string;
  /** Path of the lesson text, from the project root. */
  text: string;
  /** Experiment names: measure/<name>.ts and expected-output/<name>.txt. */
  experiments: string[];
}

export const LESSONS: Lesson[] = [
  {
    id: 1,
    slug: 'ceiling',
    title: 'The ceiling of one process',
    text: 'lessons/01-ceiling.md',
    experiments: ['ceiling', 'stall'],
  },
  {
    id: 2,
    slug: 'proxy',
    title: 'What a proxy in front of a process costs',
    text: 'lessons/02-proxy.md',
    experiments: ['proxy-overhead'],
  },
  {
    id: 3,
    slug: 'runtime',
    title: 'The application runtime: event loop, thread pool, cluster',
    text: 'lessons/03-runtime.md',
    experiments: ['blocking', 'pool', 'cluster'],
  },
  {
    id: 4,
    slug: 'where-requests-go',
    title: 'Where requests go: balancing policies and one slow replica',
    text: 'lessons/04-where-requests-go.md',
    experiments: ['distribution', 'degraded', 'sim-vs-lab'],
  },
  {
    id: 5,
    slug: 'capacity',
    title: 'Capacity: more replicas, capped replicas, and the database',
    text: 'lessons/05-capacity.md',
    experiments: ['scale-out', 'capped-scale-out'],
  },
  {
    id: 6,
    slug: 'failure',
    title: 'When a replica fails: failover, draining and rolling restarts',
    text: 'lessons/06-failure.md',
    experiments: ['failover', 'graceful', 'rolling-restart'],
  },
  {
    id: 7,
    slug: 'shared-state',
    title: 'Shared state: sessions, counters and rate limits',
    text: 'lessons/07-shared-state.md',
    experiments: ['sessions', 'counter', 'rate-limit'],
  },
  {
    id: 8,
    slug: 'autoscaling',
    title: 'Autoscaling: workers added and removed by CPU utilization',
    text: 'lessons/08-autoscaling.md',
    experiments: ['shared-compute', 'autoscale'],
  },
  {
    id: 9,
    slug: 'request-stages',
    title: 'The life of one request, stage by stage',
    text: 'lessons/09-request-stages.md',
    experiments: ['stages'],
  },
  {
    id: 10,
    slug: 'diagnosis',
    title: 'Diagnosing a slow service, then fixing it',
    text: 'lessons/10-diagnosis.md',
    experiments: ['incident'],
  },
  {
    id: 11,
    slug: 'overload',
    title: 'Past capacity: queues, timeouts, retries and load shedding',
    text: 'lessons/11-overload.md',
    experiments: ['overload'],
  },
  {
    id: 12,
    slug: 'network',
    title: 'The network between: round trips, loss, timeouts, hedging and bandwidth',
    text: 'lessons/12-network.md',
    experiments: ['network'],
  },
];
