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
 * `keys[i]` after `values[i - 1]`. The lists derived one from another share one store, each
 * reading its first `length` positions. A list that leaves the store's lists at a position cuts
 * the store back to it and goes on in place (`cuts` records where): a session's next turn starts
 * from its stored fold, whose last messages are other objects than the last step's, and copying
 * the history's values at each turn's start grew with the session (issue 26).
 */
interface RunningStore<V> {
  values: V[];
  keys: LlmMessage[];
  cuts: number[];
}

/** A list's values: the first `length` positions of its store, as they were when it was computed. */
class StoreView<V> {
  readonly #store: RunningStore<V>;
  readonly #length: number;
  /** The store's cuts this view has seen. */
  #seen: number;
  readonly #list: readonly LlmMessage[];
  readonly #valueAt: (m: LlmMessage, before: V | undefined) => V;

  constructor(
    list: readonly LlmMessage[],
    base: StoreView<V> | undefined,
    shared: number,
    valueAt: (m: LlmMessage, before: V | undefined) => V,
  ) {
    this.#list = list;
    this.#valueAt = valueAt;
    this.#store = base ? base.#store : { values: [], keys: [], cuts: [] };
    this.#length = list.length;
    this.#seen = this.#extend(base ? Math.min(shared, base.valid()) : 0);
  }

  get length(): number {
    return this.#length;
  }

  /** The value at position `i` (negative: from the end). */
  at(i: number): V | undefined {
    const at = i < 0 ? this.#length + i : i;
    if (at < 0 || at >= this.#length) return undefined;
    // A later list cut the store below this position: this list's values are computed again.
    const valid = this.valid();
    if (at >= valid) this.#seen = this.#extend(valid);
    return this.#store.values[at];
  }

  /** How many leading positions still hold this list's values. */
  valid(): number {
    let valid = this.#length;
    const { cuts } = this.#store;
    for (let k = this.#seen; k < cuts.length; k++) valid = Math.min(valid, cuts[k]!);
    return valid;
  }

  /** Computes this list's values after its first `from` (which the store holds); returns the cuts seen. */
  #extend(from: number): number {
    const store = this.#store;
    const list = this.#list;
    let at = from;
    while (at < store.keys.length && at < list.length && store.keys[at] === list[at]) at++;
    if (at < store.keys.length && at < list.length) {
      store.values.length = at;
      store.keys.length = at;
      store.cuts.push(at);
    }
    for (let i = store.keys.length; i < list.length; i++) {
      store.values.push(this.#valueAt(list[i]!, store.values[i - 1]));
      store.keys.push(list[i]!);
    }
    return store.cuts.length;
  }
}

/** What perMessageList gives for a list: its value at each position. */
export type RunningValues<V> = Pick<StoreView<V>, 'length' | 'at'>;

/**
 * A running value of message lists (`valueAt(m, value before it)`: a mapping joined up, or a
 * running total) at each position, kept per list while it lives. A list derived from a list whose
 * values are known (deriveMessages) computes only the positions after those it shares, so a step
 * of a long session costs what is new since the last one, not the whole history (issue 26).
 * Values are shared between lists: callers never mutate them.
 */
export function perMessageList<V>(valueAt: (m: LlmMessage, before: V | undefined) => V): (list: readonly LlmMessage[]) => RunningValues<V> {
  const kept = new WeakMap<readonly LlmMessage[], StoreView<V>>();
  return (list) => {
    let view = kept.get(list);
    if (!view) {
      const from = lineage.get(list);
      view = new StoreView(list, from && kept.get(from.base), from?.shared ?? 0, valueAt);
      kept.set(list, view);
    }
    return view;
  };
}
