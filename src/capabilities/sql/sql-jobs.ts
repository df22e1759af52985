/** The jobs the SQL sandbox (`sql-sandbox.ts`) sends its workers (`sql-worker.ts`), and their answers. */
import type { SqlExecResult, SqlQueryResult, SqlSchemaObject, SqlValue } from '../storage-ports.js';

export interface SqlWorkerData {
  /** SQLite's hard heap limit inside the worker's WASM instance. */
  heapBytes: number;
  /** Largest total size of one query's rows. */
  maxResultBytes: number;
}

export type SqlJob =
  | { op: 'create' }
  | { op: 'exec'; bytes: Uint8Array; sql: string; params?: SqlValue[]; maxDatabaseBytes: number }
  | { op: 'query'; bytes: Uint8Array; sql: string; params?: SqlValue[]; limit?: number }
  | { op: 'schema'; bytes: Uint8Array };

export type SqlJobReply =
  | { ok: true; result: SqlExecResult | SqlQueryResult | SqlSchemaObject[] | null; bytes?: Uint8Array }
  | { ok: false; status: number; message: string };

/**
 * The bytes as a view over an ArrayBuffer of their own, so that buffer can be transferred to
 * another thread: as is when they already fill it, else copied once. (Node pools small Buffers
 * in shared slabs; transferring a slab would detach unrelated Buffers.)
 */
export function transferableBytes(bytes: Uint8Array): Uint8Array<ArrayBuffer> {
  const ownsBuffer = bytes.buffer instanceof ArrayBuffer && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  return ownsBuffer ? new Uint8Array(bytes.buffer as ArrayBuffer) : new Uint8Array(bytes);
}
