import { type EncodedJsonReply, encodedFrom } from './reply.js';

/**
 * A JSON list reply whose `data` array also appears under `alias` (`agents`, `sessions`,
 * `messages`: the keys the earlier public API's SDK reads;
 * docs/decisions/0044-earlier-api-aliases.md). Replies are serialised with plain `JSON.stringify`, which
 * would walk a shared array once per key and encode its text twice; here the array is
 * serialised and UTF-8 encoded once and its bytes copied under both keys, so the alias costs a
 * memory copy and the bytes on the wire.
 */
export function aliasedListReply<S extends number, L extends { data: readonly unknown[] }>(
  status: S,
  list: L,
  alias: string,
): EncodedJsonReply<S, L> {
  const { data, ...rest } = list;
  const items = Buffer.from(JSON.stringify(data), 'utf8');
  const tail = JSON.stringify(rest);
  const raw = Buffer.concat([
    Buffer.from('{"data":'),
    items,
    Buffer.from(`,${JSON.stringify(alias)}:`),
    items,
    Buffer.from(tail === '{}' ? '}' : `,${tail.slice(1)}`),
  ]);
  return { status, raw, contentType: 'application/json', [encodedFrom]: list };
}
