import { createLocalBus, type LocalBusOptions } from './local/local-bus.js';
import { createNatsBus, type NatsBusOptions } from './nats/nats-bus.js';
import type { Bus, LoggedEvent } from './ports.js';

export { createLocalBus } from './local/local-bus.js';
export { createNatsBus } from './nats/nats-bus.js';
export { eventJson } from './event-json.js';
export { iterateFeed } from './feed-iterator.js';
export { isBusUnavailable } from './nats/unavailable.js';
export { UnstorableEventError } from './unstorable-event.js';
export type { LocalBusOptions } from './local/local-bus.js';
export type { NatsBusOptions } from './nats/nats-bus.js';
export type {
  AppendOptions,
  AppendResult,
  Bus,
  BusReader,
  ClaimOptions,
  EventContext,
  EventLog,
  EventReader,
  EventSink,
  EventSubscription,
  FeedHandle,
  InstanceStatus,
  LoggedEvent,
  NewEvent,
  NewLoggedEvent,
  OpsHooks,
  OpsService,
  OpsServiceOptions,
  ReadOptions,
  Signal,
  Signals,
  TurnClaim,
  TurnJob,
  TurnQueue,
} from './ports.js';

export type BusOptions = ({ kind: 'local' } & LocalBusOptions) | ({ kind: 'nats' } & NatsBusOptions);

/** Builds the bus: `local` (SQL through the store, embedded mode) or `nats` (JetStream, distributed mode). */
export async function createBus<E extends LoggedEvent = LoggedEvent>(opts: BusOptions): Promise<Bus<E>> {
  switch (opts.kind) {
    case 'local':
      return createLocalBus<E>(opts);
    case 'nats':
      return createNatsBus<E>(opts);
    default: {
      const never: never = opts;
      throw new Error(`unknown bus kind: ${JSON.stringify(never)}`);
    }
  }
}
export { createKeyedChain } from './keyed-chain.js';
export type { Presence } from './ports.js';
export { RecencyMap } from './recency-map.js';
