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
 * Values computed along message lists, position by position: `values[i]` was computed at message
 * `keys[i]` after `values[i - 1]`. Positions are only appended, so the lists derived one from
 * another share one store, each reading its first `length` positions.
 */
interface RunningStore<V> {
  values: V[];
  keys: LlmMessage[];
}
/** A list's values: the first `length` positions of its store (`at(-1)`: its last message's). */
class StoreView<V> {
  constructor(
    readonly store: RunningStore<V>,
    readonly length: number,
  ) {}

  at(i: number): V | undefined {
    const at = i < 0 ? this.length + i : i;
    return at >= 0 && at < this.length ? this.store.values[at] : undefined;
  }
}

/** What perMessageList gives for a list: its value at each position. */
export type RunningValues<V> = Pick<StoreView<V>, 'length' | 'at'>;

/**
 * The view of `list` on the store of the list it was derived from. A step's list extends the
 * last step's, whose positions end where the store's do: it appends in place. A second list
 * derived from the same one (the turn's view and its stored fold both extend it) finds its next
 * messages computed there already and shares them. A list that shares only part of the store
 * copies that part. Copying the shared prefix for every list was most of what an old session's
 * request measure and encoding allocated (issue 26).
 */
function viewOf<V>(
  list: readonly LlmMessage[],
  base: StoreView<V> | undefined,
  shared: number,
  valueAt: (m: LlmMessage, before: V | undefined) => V,
): StoreView<V> {
  let store = base?.store ?? { values: [], keys: [] };
  let at = base ? Math.min(shared, base.length) : 0;
  while (at < store.keys.length && at < list.length && store.keys[at] === list[at]) at++;
  if (at < store.keys.length && at < list.length) store = { values: store.values.slice(0, at), keys: store.keys.slice(0, at) };
  for (let i = at; i < list.length; i++) {
    store.values.push(valueAt(list[i]!, store.values[i - 1]));
    store.keys.push(list[i]!);
  }
  return new StoreView(store, list.length);
}

/**
 * A running value of message lists (`valueAt(m, value before it)`: a mapping joined up, or a
 * running total) at each position, kept per list while it lives. A
 * list derived from a list whose values are known (deriveMessages) computes only the positions
 * after those it shares, so a step of a long session costs what is new since the last one, not
 * the whole history (issue 26). Values are shared between lists: callers never mutate them.
 */
export function perMessageList<V>(valueAt: (m: LlmMessage, before: V | undefined) => V): (list: readonly LlmMessage[]) => RunningValues<V> {
  const kept = new WeakMap<readonly LlmMessage[], StoreView<V>>();
  return (list) => {
    let view = kept.get(list);
    if (!view) {
      const from = lineage.get(list);
      view = viewOf(list, from && kept.get(from.base), from?.shared ?? 0, valueAt);
      kept.set(list, view);
    }
    return view;
  };
}
