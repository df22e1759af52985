/** Raw SQL helpers shared by the storage modules: transactions, advisory locks, row values. */
import type { SqlEntityManager } from '@mikro-orm/sql';
import type { Store } from '../db/index.js';

/** Runs one parameterised statement (`?` placeholders) and returns its rows. */
export type Query = <T = Record<string, unknown>>(sql: string, params?: unknown[]) => Promise<T[]>;

/** What the storage modules need from the store. */
export type StorageDb = Pick<Store, 'em' | 'sql'>;

/** Runs `fn` in one transaction; everything it queries through `q` commits or rolls back together. */
export async function inTransaction<T>(db: StorageDb, fn: (q: Query) => Promise<T>): Promise<T> {
  return db.em().transactional(async (em) => {
    const sqlEm = em as unknown as SqlEntityManager;
    const q: Query = async <R>(sql: string, params: unknown[] = []) => (await sqlEm.execute(sql, params)) as R[];
    return fn(q);
  });
}

/**
 * Serialises writers of one resource for the rest of the transaction (`pg_advisory_xact_lock`
 * on a hash of `key`, released at commit or rollback). Works the same on PGlite.
 */
export async function lockKey(q: Query, key: string): Promise<void> {
  await q('select pg_advisory_xact_lock(hashtextextended(?, 0))', [key]);
}

/** A timestamp column as ISO 8601 (drivers return Date or string). */
export function iso(value: unknown): string {
  return (value instanceof Date ? value : new Date(String(value))).toISOString();
}

/** Same as `iso`, passing null through. */
export function isoOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : iso(value);
}

/** A bigint/numeric column as a number (pg returns int8 as a string). */
export function num(value: unknown): number {
  return typeof value === 'number' ? value : Number(value ?? 0);
}

/** A bytea column as a Buffer (pg returns Buffer, PGlite Uint8Array). */
export function bytes(value: unknown): Buffer {
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  throw new TypeError('expected a bytea value');
}
