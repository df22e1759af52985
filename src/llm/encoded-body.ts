import { perMessage, perMessageList } from './per-message.js';
import type { LlmMessage } from './types.js';

const utf8 = new TextEncoder();
const COMMA = 0x2c;

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
 * A per-message encoding kept per message and per list, as the mappings are (see perMessage,
 * perMessageList): a step of a long session encodes only the messages that are new since the
 * last step (issue 26). A message whose mapping changes is a new object (a summary leading the
 * first message, images resolved per attempt), so it is encoded anew. An empty encoding stands
 * for a message that maps to no item.
 */
export function encodedMessages(encode: (m: LlmMessage) => Uint8Array): (list: readonly LlmMessage[]) => readonly Uint8Array[] {
  const one = perMessage(encode);
  return perMessageList((m) => one(m));
}

/**
 * The bytes of `JSON.stringify(body)` where `body[key]` is the array whose items are given
 * already encoded (`lists`, in order; empty ones are no item): the same keys in the same order,
 * the other values encoded here, so the history's encoding is copied, not redone, on every request
 * of a long session (issue 26: ~330 KB twice a turn at turn 5,000). `body[key]`'s own value is
 * ignored. Handed to the SDK as bytes, which it sends verbatim.
 */
export function encodeJsonBody(body: object, key: string, ...lists: (readonly Uint8Array[])[]): Buffer {
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
  const head = Buffer.from(`{${fields.slice(0, at).join(',')}${at > 0 ? ',' : ''}${JSON.stringify(key)}:[`);
  const tail = Buffer.from(
    `]${fields
      .slice(at)
      .map((f) => `,${f}`)
      .join('')}}`,
  );
  let length = head.length + tail.length;
  let count = 0;
  for (const list of lists) {
    for (const item of list) {
      if (!item.length) continue;
      length += item.length;
      count++;
    }
  }
  if (count > 1) length += count - 1;
  const out = Buffer.allocUnsafe(length);
  let offset = head.copy(out, 0);
  let first = true;
  for (const list of lists) {
    for (const item of list) {
      if (!item.length) continue;
      if (!first) out[offset++] = COMMA;
      first = false;
      out.set(item, offset);
      offset += item.length;
    }
  }
  tail.copy(out, offset);
  return out;
}
