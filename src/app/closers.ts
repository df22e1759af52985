import type { Logger } from '../log.js';

/**
 * What the app opened, closed in reverse order (style rule 17): each builder registers what it
 * opens as soon as it is open, so a start that fails half-way closes exactly that much.
 */
export class Closers {
  readonly #list: { name: string; close(): Promise<void> }[] = [];

  /** Registers `close`; it runs before everything registered earlier. */
  add(name: string, close: () => Promise<void>): void {
    this.#list.unshift({ name, close });
  }

  /** Closes everything registered, newest first; a failing closer is logged and the rest still run. */
  async closeAll(log: Logger): Promise<void> {
    for (const c of this.#list.splice(0)) {
      try {
        await c.close();
      } catch (err) {
        log.warn({ err, component: c.name }, 'error while closing');
      }
    }
  }
}
