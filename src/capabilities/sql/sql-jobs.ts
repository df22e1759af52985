/** The messages between the SQL sandbox (`sql-sandbox.ts`) and its workers (`sql-worker.ts`). */
import type { SqlExecResult, SqlQueryResult, SqlSchemaObject, SqlValue } from '../storage-ports.js';

export interface SqlWorkerData {
  /** SQLite's hard heap limit inside the worker's WASM instance. */
  heapBytes: number;
  /** Largest total size of one query's rows. */
  maxResultBytes: number;
}

export type SqlJob =
  | { id: number; op: 'create' }
  | { id: number; op: 'exec'; bytes: Uint8Array; sql: string; params?: SqlValue[]; maxDatabaseBytes: number }
  | { id: number; op: 'query'; bytes: Uint8Array; sql: string; params?: SqlValue[]; limit?: number }
  | { id: number; op: 'schema'; bytes: Uint8Array };

/** Distributes over the union, so `Omit<SqlJob, 'id'>` keeps each variant's fields. */
export type SqlJobInput = SqlJob extends infer J ? (J extends SqlJob ? Omit<J, 'id'> : never) : never;

export type SqlJobReply =
  | { id: number; ok: true; result: SqlExecResult | SqlQueryResult | SqlSchemaObject[] | null; bytes?: Uint8Array }
  | { id: number; ok: false; status: number; message: string };

/**
 * The bytes as a view over an ArrayBuffer of their own, so that buffer can be transferred to
 * another thread: as is when they already fill it, else copied once. (Node pools small Buffers
 * in shared slabs; transferring a slab would detach unrelated Buffers.)
 */
export function transferableBytes(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const ownsBuffer = bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  return ownsBuffer ? new Uint8Array(bytes.buffer as ArrayBuffer) : new Uint8Array(bytes);
}
