import { createLocalBus, type LocalBusOptions } from './local/local-bus.js';
import { createNatsBus, type NatsBusOptions } from './nats/nats-bus.js';
import type { Bus } from './ports.js';

export { createLocalBus } from './local/local-bus.js';
export { createNatsBus } from './nats/nats-bus.js';
export { isBusUnavailable } from './nats/unavailable.js';
export { UnstorableEventError } from './unstorable-event.js';
export type { LocalBusOptions } from './local/local-bus.js';
export type { NatsBusOptions } from './nats/nats-bus.js';
export type {
  AppendOptions,
  AppendResult,
  Bus,
  ClaimOptions,
  EventContext,
  EventLog,
  EventSubscription,
  InstanceStatus,
  NewEvent,
  OpsHooks,
  OpsService,
  OpsServiceOptions,
  ReadOptions,
  SessionEvent,
  Signal,
  Signals,
  TurnClaim,
  TurnJob,
  TurnQueue,
} from './ports.js';

export type BusOptions = ({ kind: 'local' } & LocalBusOptions) | ({ kind: 'nats' } & NatsBusOptions);

/** Builds the bus: `local` (SQL through the store, embedded mode) or `nats` (JetStream, distributed mode). */
export async function createBus(opts: BusOptions): Promise<Bus> {
  switch (opts.kind) {
    case 'local':
      return createLocalBus(opts);
    case 'nats':
      return createNatsBus(opts);
    default: {
      const never: never = opts;
      throw new Error(`unknown bus kind: ${JSON.stringify(never)}`);
    }
  }
}
export { catalogued } from './session-event.js';
export { createKeyedChain } from './keyed-chain.js';
export type { Presence } from './ports.js';
export { RecencyMap } from './recency-map.js';
