import type { Bus } from './bus/ports.js';
import type { Config } from './config.js';
import type { Logger } from './log.js';
import type { Store } from './store/index.js';

/** What route modules and actors are built from; assembled once in src/app.ts. */
export interface AppServices {
  config: Config;
  log: Logger;
  store: Store;
  bus: Bus;
}
