import { createBus, type Bus, type NatsBusOptions, type LoggedEvent } from '../../src/bus/index.js';
import { createLogger } from '../../src/log.js';
import { startNatsServer, type NatsServer, type NatsServerOptions } from '../helpers/nats-server.js';
import type { BusHarness } from './conformance.js';

export const ACK_WAIT_MS = 2000;
const log = createLogger('silent');

/**
 * Buses on one fresh nats-server (started with `server` options: TLS, users, permissions);
 * `url` and `auth` default to the server's own, and may name other credentials.
 */
export async function natsHarness(
  extra: Partial<NatsBusOptions> = {},
  server: Omit<NatsServerOptions, 't'> = {},
  connectAs: (s: NatsServer) => Pick<NatsBusOptions, 'url' | 'auth'> = (s) => ({ url: s.url, auth: s.auth }),
): Promise<BusHarness> {
  const cleanups: (() => unknown)[] = [];
  const started = await startNatsServer({ ...server, t: { after: (fn) => cleanups.push(fn) } });
  const { url, auth } = connectAs(started);
  const buses: Bus<LoggedEvent>[] = [];
  return {
    leaseMs: ACK_WAIT_MS,
    // Shards decide where a session lives: the children must use the same count.
    childEnv: {
      BUS_KIND: 'nats',
      BUS_NATS_URL: url,
      BUS_NATS_AUTH: JSON.stringify(auth ?? {}),
      BUS_NATS_SHARDS: String(extra.shards ?? 1),
    },
    async connect() {
      const bus = await createBus({ kind: 'nats', url, auth, log, ackWaitMs: ACK_WAIT_MS, ...extra });
      buses.push(bus);
      return bus;
    },
    async close() {
      for (const bus of buses) await bus.close();
      for (const fn of cleanups) await fn();
    },
  };
}
