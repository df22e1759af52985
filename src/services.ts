import type { AuthModule } from './auth/index.js';
import type { SessionEvent } from '../schemas/events.js';
import type { Bus } from './bus/index.js';
import type { Config } from './config.js';
import type { Keyring } from './crypto/index.js';
import type { Logger } from './log.js';
import type { Store } from './db/index.js';
import type { ConnectionLimits } from './events/index.js';
import type { SessionHub } from './events/index.js';
import type { Storage } from './session-storage/index.js';

/**
 * The infrastructure the modules share, as createApp hands it back (tests, benches). No route
 * module takes it as a bag: each src/api/<resource>/index.ts declares the deps it is built from.
 */
export interface AppServices {
  config: Config;
  log: Logger;
  store: Store;
  bus: Bus<SessionEvent>;
  auth: AuthModule;
  /** Key-encryption keyring of the envelope encryption (src/crypto). */
  keyring: Keyring;
  /** Capability storage: session files, kv, secrets, SQL, schedules; images; user connections. */
  storage: Storage;
  /** SSE fan-out of this instance. */
  hub: SessionHub;
  streamLimits: ConnectionLimits;
}
