import { perMessage, perMessageList } from './per-message.js';
import type { LlmMessage } from './types.js';

const utf8 = new TextEncoder();
const COMMA = 0x2c;
const NONE = new Uint8Array(0);
const COMMA_BYTES = new Uint8Array([COMMA]);

/**
 * The UTF-8 bytes of `JSON.stringify(value)`. TextEncoder gives each its own ArrayBuffer: an
 * encoding kept for a message's life must not pin a slab of Node's shared Buffer pool.
 */
export function jsonBytes(value: unknown): Uint8Array {
  return utf8.encode(JSON.stringify(value));
}

/** The UTF-8 bytes of the values' JSON texts joined by commas: a message that maps to several items of a list. */
export function jsonItemsBytes(values: readonly unknown[]): Uint8Array {
  return utf8.encode(values.map((v) => JSON.stringify(v)).join(','));
}

/**
 * Bytes that only grow: the first `used` never change, so a view of them taken for a request
 * stays valid while later steps append. Full, it moves to a buffer twice the size (a view taken
 * before keeps the old one alive until its request is sent).
 */
class AppendOnlyBytes {
  bytes = NONE;
  used = 0;

  append(at: number, comma: boolean, item: Uint8Array): number {
    const end = at + (comma ? 1 : 0) + item.length;
    if (end > this.bytes.length) {
      const grown = new Uint8Array(Math.max(end * 2, this.bytes.length * 2, 1024));
      grown.set(this.bytes.subarray(0, at));
      this.bytes = grown;
    }
    if (comma) this.bytes[at++] = COMMA;
    this.bytes.set(item, at);
    this.used = end;
    return end;
  }
}

/** A list's items up to a position, joined by commas: the first `end` bytes of `store`. */
interface Joined {
  readonly store: AppendOnlyBytes;
  readonly end: number;
}

/**
 * `before` with `item` appended. A step's list extends the last step's, whose joined bytes end
 * where the store's do: it appends in place. A second list derived from the same one (the turn's
 * view and the stored fold both extend it) finds the item there already and shares the bytes. A
 * list that shares only part of another's (a retried step, a message resolved anew) copies that
 * part into a store of its own. Without the sharing, most turns of a long session copied its whole
 * history, and every copied store stayed reachable from the later lists' first entries: 50
 * sessions at turn 1,000 held 12 GB.
 */
function joinedAfter(before: Joined | undefined, item: Uint8Array): Joined | undefined {
  if (!item.length) return before;
  if (!before) {
    const store = new AppendOnlyBytes();
    return { store, end: store.append(0, false, item) };
  }
  let { store } = before;
  if (store.used !== before.end) {
    if (holdsNext(store, before.end, item)) return { store, end: before.end + 1 + item.length };
    store = new AppendOnlyBytes();
    store.append(0, false, before.store.bytes.subarray(0, before.end));
  }
  return { store, end: store.append(before.end, true, item) };
}

/** Whether `store` holds `item` after a comma at `at`: a list derived from the same one appended it there first. */
function holdsNext(store: AppendOnlyBytes, at: number, item: Uint8Array): boolean {
  const end = at + 1 + item.length;
  if (end > store.used || store.bytes[at] !== COMMA) return false;
  return Buffer.compare(store.bytes.subarray(at + 1, end), item) === 0;
}

/**
 * The encodings of a list's messages joined by commas, kept per list as its per-message values
 * are (see perMessageList), each message's encoding kept per message (perMessage): a step of a
 * long session encodes and copies only the messages that are new since the last step (issue 26).
 * A message whose mapping changes is a new object (a summary leading the first message, images
 * resolved per attempt), so it is encoded anew. An empty encoding stands for a message that maps
 * to no item. The bytes returned are a view shared with later steps: never written to.
 */
export function encodedMessages(encode: (m: LlmMessage) => Uint8Array): (list: readonly LlmMessage[]) => Uint8Array {
  const one = perMessage(encode);
  const joined = perMessageList<Joined | undefined>((m, before) => joinedAfter(before, one(m)));
  return (list) => {
    const last = joined(list).at(-1);
    return last ? last.store.bytes.subarray(0, last.end) : NONE;
  };
}

/** Below this a body is one buffer (one socket write); above it, its parts go as they are, uncopied. */
const COPY_BELOW = 16 * 1024;

/**
 * The bytes of `JSON.stringify(body)` where `body[key]` is the array whose items are given
 * already encoded and joined (`items`, after `first` if given): the same keys in the same order,
 * the other values encoded here. A long session's history is sent as its kept bytes, neither
 * encoded nor copied again (issue 26: ~330 KB twice a turn at turn 5,000); a small body is
 * copied into one buffer. `body[key]`'s own value is ignored. Handed to the SDK as bytes, which
 * it sends verbatim (postStreaming).
 */
export function encodeJsonBody(body: object, key: string, items: Uint8Array, first?: Uint8Array): readonly Uint8Array[] {
  const fields: string[] = [];
  let at = -1;
  for (const [k, v] of Object.entries(body)) {
    if (k === key) {
      at = fields.length;
      continue;
    }
    // What JSON.stringify leaves out of an object (undefined, functions) is left out here.
    const text: string | undefined = JSON.stringify(v);
    if (text !== undefined) fields.push(`${JSON.stringify(k)}:${text}`);
  }
  if (at < 0) throw new TypeError(`encodeJsonBody: the body has no "${key}" field`);
  const open = Buffer.from(`{${fields.slice(0, at).join(',')}${at > 0 ? ',' : ''}${JSON.stringify(key)}:[`);
  const head = first?.length ? Buffer.concat([open, first, items.length ? COMMA_BYTES : NONE]) : open;
  const tail = Buffer.from(
    `]${fields
      .slice(at)
      .map((f) => `,${f}`)
      .join('')}}`,
  );
  return items.length >= COPY_BELOW ? [head, items, tail] : [Buffer.concat([head, items, tail])];
}
