import type { Reply } from './route.js';

/**
 * A JSON list reply whose `data` array also appears under `alias` (`agents`, `sessions`,
 * `messages`: the keys the earlier public API's SDK reads; docs/decisions.md, "Compatibility
 * with the earlier public API"). Replies are serialised with plain `JSON.stringify`, which
 * would walk a shared array once per key; here the array is serialised once and its text is
 * written under both keys, so the alias costs a string concatenation and the bytes on the wire.
 */
export function aliasedListReply(status: number, list: { data: readonly unknown[] } & Record<string, unknown>, alias: string): Reply {
  const { data, ...rest } = list;
  const items = JSON.stringify(data);
  const tail = JSON.stringify(rest);
  const raw = `{"data":${items},${JSON.stringify(alias)}:${items}${tail === '{}' ? '}' : `,${tail.slice(1)}`}`;
  return { status, raw, contentType: 'application/json' };
}
