/**
 * The structured-reply checks on the parse pool (reply-schemas.ts runs in its workers): the
 * schema's check when a message is accepted, and the reply's when its step ends. Without a pool
 * (tests, a module built alone) the jobs run on the calling thread.
 */
import type { PoolTenant } from './fair-share.js';
import type { ParsePool } from './parse-pool.js';
import type { ReplyCheck } from './reply-schemas.js';

export interface ReplySchemaChecks {
  /** Why `schema` does not compile, or null; rejects with ParseLimitError past the pool's deadline. */
  problem(schema: Record<string, unknown>, tenant: PoolTenant): Promise<string | null>;
  /** The reply's JSON value, or why it does not match `schema`. */
  check(schema: Record<string, unknown>, text: string, tenant: PoolTenant): Promise<ReplyCheck>;
}

export function createReplySchemaChecks(run?: ParsePool['run']): ReplySchemaChecks {
  const go: ParsePool['run'] = run ?? (async (job) => (await import('./parse-jobs.js')).runParseJob(job) as never);
  return {
    problem: (schema, tenant) => go({ kind: 'reply-schema', schema }, tenant),
    check: (schema, text, tenant) => go({ kind: 'structured-reply', schema, text }, tenant),
  };
}
