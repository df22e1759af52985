import type { LlmMessage } from './types.js';

/**
 * A mapping of messages kept while each message lives. Every step of a long session re-sends
 * the whole history, and the transcript hands the same message objects to every step and turn
 * of a worker, so a vendor adapter maps each message once, not once per step (issue 26). The
 * values are shared by every request that sends the message: callers never mutate them.
 */
export function perMessage<T>(map: (m: LlmMessage) => T): (m: LlmMessage) => T {
  const kept = new WeakMap<LlmMessage, T>();
  return (m) => {
    let value = kept.get(m);
    if (value === undefined) {
      value = map(m);
      kept.set(m, value);
    }
    return value;
  };
}
