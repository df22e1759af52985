import type { Logger } from '../../src/log.js';

const LEVELS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal']);
const noop = () => undefined;

/**
 * A child logger that is only built when something is actually logged at an enabled level:
 * pino serialises (and redacts) a child's bindings when the child is created, which a busy
 * worker would otherwise pay on every turn even with logging at `warn`.
 */
export function lazyChildLogger(parent: Logger, bindings: Record<string, unknown>): Logger {
  let child: Logger | undefined;
  return new Proxy({} as Logger, {
    get(_target, prop) {
      if (typeof prop === 'string' && LEVELS.has(prop) && !parent.isLevelEnabled(prop)) return noop;
      child ??= parent.child(bindings);
      const value = (child as unknown as Record<string | symbol, unknown>)[prop];
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(child) : value;
    },
  });
}
