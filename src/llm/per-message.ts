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

/** The list a message list was derived from, and how many leading messages the two share. */
const lineage = new WeakMap<readonly LlmMessage[], { base: readonly LlmMessage[]; shared: number }>();

/**
 * Records that `list` begins with the first `shared` messages of `base` (the same objects): what
 * is kept per list (perMessageList) is then computed for the rest only. The transcript derives
 * each step's history from the last step's (issue 26). A list keeps only its own base: the base's
 * link is dropped, so a session's lists never form a chain that outlives them.
 */
export function deriveMessages(list: readonly LlmMessage[], base: readonly LlmMessage[], shared: number): void {
  lineage.delete(base);
  if (shared > 0) lineage.set(list, { base, shared: Math.min(shared, base.length, list.length) });
}

/**
 * A per-position value of message lists (`valueAt(m, value before it)`: a mapping or a running
 * total), kept per list while it lives. A list derived from a list whose values are known
 * (deriveMessages) copies the shared prefix's values and computes only the new positions, so a
 * step of a long session costs what is new since the last one, not the whole history (issue 26).
 * Values are shared between lists: callers never mutate them.
 */
export function perMessageList<V>(valueAt: (m: LlmMessage, before: V | undefined) => V): (list: readonly LlmMessage[]) => readonly V[] {
  const kept = new WeakMap<readonly LlmMessage[], V[]>();
  return (list) => {
    let values = kept.get(list);
    if (values) return values;
    const from = lineage.get(list);
    const baseValues = from && kept.get(from.base);
    values = baseValues ? baseValues.slice(0, from.shared) : [];
    for (let i = values.length; i < list.length; i++) values.push(valueAt(list[i]!, values[i - 1]));
    kept.set(list, values);
    return values;
  };
}
