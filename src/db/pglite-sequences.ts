import type { PGlite } from '@electric-sql/pglite';

/** Frontend messages of the extended protocol that belong to a sequence a Sync ends: Parse, Bind, Describe, Execute, Close, Flush. */
const IN_SEQUENCE = new Set([...'PBDECH'].map((c) => c.charCodeAt(0)));
const SYNC = 'S'.charCodeAt(0);
const SYNC_MESSAGE = new Uint8Array([SYNC, 0, 0, 0, 4]);
const READY_FOR_QUERY = 'Z'.charCodeAt(0);

/**
 * PGlite as the socket server should see it: a connection's extended-protocol sequence (Parse …
 * Sync) counts as a transaction, so the server runs no other connection's message inside it.
 *
 * The server (`@electric-sql/pglite-socket`) queues each message of each connection on the one
 * PGlite session and keeps a connection's messages together only while `isInTransaction()`.
 * A Bind too long for one socket read arrives in pieces, and other connections' whole sequences
 * ran between its Parse and its Bind (seen with a 2 MB parameter); one that lands between a Bind
 * and its Execute ends the shared unnamed portal, and an error there aborts the implicit
 * transaction another connection's write is in. The service's prepared statements use the
 * extended protocol (prepared-sql.ts), so their sequences must not interleave.
 *
 * And PGlite answers an error inside a sequence with a ReadyForQuery of its own, then another for
 * the Sync; PostgreSQL sends only the second. The driver takes the first as the end of the failed
 * statement and the second as the end of the next one it sends, which then resolves with no rows
 * (seen: a prepared statement run again after 26000 answered `[]`). Inside a sequence those
 * ReadyForQuery messages are dropped.
 */
export function oneSequenceAtATime(db: PGlite): PGlite {
  let open = false;
  const execProtocolRawStream: PGlite['execProtocolRawStream'] = async (message, options) => {
    if (!IN_SEQUENCE.has(message[0]!)) {
      await db.execProtocolRawStream(message, options);
      if (message[0] === SYNC) open = false;
      return;
    }
    const onRawData = options?.onRawData;
    await db.execProtocolRawStream(message, { ...options, onRawData: onRawData && ((chunk) => onRawData(withoutReadyForQuery(chunk))) });
    open = true;
  };
  // The server rolls back with `exec` when a connection leaves mid-transaction: a sequence it left
  // open ends there too (a Sync first), or it would keep the queue for whichever connection ran next.
  const exec: PGlite['exec'] = async (query, options) => {
    if (open) await db.execProtocolRawStream(SYNC_MESSAGE, { onRawData: () => undefined });
    open = false;
    return db.exec(query, options);
  };
  const isInTransaction = () => open || db.isInTransaction();
  const own: Record<PropertyKey, unknown> = { execProtocolRawStream, exec, isInTransaction };
  return new Proxy(db, {
    get(target, key) {
      if (key in own) return own[key];
      // PGlite keeps its state in private fields: its methods run on the instance itself.
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** The chunk without its ReadyForQuery messages when it holds whole messages (PGlite's chunks do), else as it is. */
function withoutReadyForQuery(chunk: Uint8Array): Uint8Array {
  const view = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  const kept: Uint8Array[] = [];
  let dropped = false;
  let at = 0;
  while (at + 5 <= chunk.length) {
    const end = at + 1 + view.getInt32(at + 1);
    if (end > chunk.length) return chunk;
    if (chunk[at] === READY_FOR_QUERY) dropped = true;
    else kept.push(chunk.subarray(at, end));
    at = end;
  }
  return dropped && at === chunk.length ? Buffer.concat(kept) : chunk;
}
