import type { SessionEvent } from '../../schemas/events.js';
import type { Bus, BusReader } from '../bus/index.js';
import type { Config } from '../config.js';
import { withAccumulatedDeltas } from '../events/index.js';
import { createConnectionLimits } from '../events/index.js';
import { createSessionHub } from '../events/index.js';
import type { Logger } from '../log.js';
import type { Closers } from './closers.js';

/** What the event readers (REST, SSE) are served from: the log as readers see it, the SSE hub and its connection limits. */
export function buildEventStreams(config: Config, bus: Bus<SessionEvent>, { log, closers }: { log: Logger; closers: Closers }) {
  // Readers get deltas with `accumulated`; the log stores them without (issue 30 item 2).
  const served: BusReader<SessionEvent> = { events: withAccumulatedDeltas(bus.events), signals: bus.signals };
  const hub = createSessionHub({ bus: served, log });
  closers.add('sse-hub', async () => hub.close());
  const streamLimits = createConnectionLimits({
    perSession: config.SSE_MAX_PER_SESSION,
    perOrg: config.SSE_MAX_PER_ORG,
    global: config.SSE_MAX_GLOBAL,
    expectedInstances: config.EXPECTED_INSTANCES,
  });
  return { served, hub, streamLimits };
}

export type EventStreams = ReturnType<typeof buildEventStreams>;
