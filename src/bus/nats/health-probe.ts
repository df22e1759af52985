import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from '../../log.js';
import { withDeadline } from '../../retry/index.js';

/** A subject nobody writes: the probe reads its last message (none) to prove a stream answers. */
export const HEALTH_PROBE_KEY = 'health-probe';

/** How long the whole probe may take, in ms: under /health's own 2 s bound. */
const PROBE_DEADLINE_MS = 1_500;
/** Within the grace, how long the probe waits for the stream reads before it answers anyway, in ms. */
const QUICK_READ_MS = 300;
/**
 * How long the streams may stay unreadable while this instance's own server answers, in ms.
 * A stream whose leader's node froze or died answers no read anywhere until its followers
 * elect a new leader (4-9 s in nats-server 2.10): that is the cluster's state, the same for
 * every instance, and failing all of them at once only makes a load balancer drop the whole
 * service (the chaos run: every instance unhealthy for 4-16 s while one node was frozen).
 * Longer than an election, it is an outage, and /health says so.
 */
export const STREAM_GRACE_MS = 15_000;

export interface HealthProbeTarget {
  stream: string;
  subject: string;
}

/**
 * This instance's own truth: its server answers a ping (the connection's own ping check takes
 * it off a stalled node within seconds, connect options), and its streams have not been found
 * unreadable for longer than `streamGraceMs`. The grace counts from the first probe that found
 * them unreadable, not from the last read that worked: probes come only when someone asks
 * (a load balancer every 10-30 s), and a quiet spell before an election is not an outage
 * (the chaos run: the instance away from a frozen node failed its first probe after 14 s unasked).
 */
export async function createHealthProbe(
  nc: NatsConnection,
  log: Logger,
  targets: HealthProbeTarget[],
  streamGraceMs = STREAM_GRACE_MS,
): Promise<() => Promise<void>> {
  const jsm = await jetstreamManager(nc, { timeout: PROBE_DEADLINE_MS, checkAPI: false });
  let unreadableSince: number | undefined;
  return async () => {
    await withDeadline(nc.rtt(), PROBE_DEADLINE_MS, 'the NATS server did not answer a ping');
    const askedAt = Date.now();
    const reads = Promise.all(targets.map(({ stream, subject }) => jsm.direct.getMessage(stream, { last_by_subj: subject }))).then(() => {
      unreadableSince = undefined;
    });
    if (unreadableSince !== undefined && askedAt - unreadableSince > streamGraceMs) return reads;
    // Within the grace, a read that hangs (its replica frozen) or fails need not hold the answer up.
    const answered = await withDeadline(reads, QUICK_READ_MS).then(
      () => true,
      () => false,
    );
    if (answered || unreadableSince !== undefined) return;
    unreadableSince = askedAt;
    log.warn('JetStream streams unreadable (a leader election?); healthy while the server answers');
  };
}
