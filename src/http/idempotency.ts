/**
 * `Idempotency-Key` on the routes that create something (`idempotent: true`): a retry within
 * the key's lifetime (24 h) with the same method, path and body gets the first outcome — same
 * status, body and headers, plus `Idempotent-Replayed: true` — from any instance; the same key
 * with another request is 422; a retry while the first still runs is 409 with `Retry-After`.
 * Keys are per principal (organisation and user): an outcome is replayed only to the user whose
 * request produced it, so another user's retry with the same key runs anew and meets its route's
 * access check (issue 30 item 8). Only outcomes a retry should see again are kept: successes and
 * client errors; a 5xx, a 409 (busy: retrying later may succeed) or a 429 gives the key up.
 * A handler whose side effect may land although its request fails (a message's turn job) reserves
 * what it is about to create first (`RequestContext.idempotency`): the retry then finds it.
 */
import { createHash } from 'node:crypto';
import { IdempotencyKeyInUseError, InvalidRequestError, UnprocessableError, AppError } from '../errors.js';
import type { Stage } from './compose.js';
import type { Exchange } from './exchange.js';

/** Longest accepted key; UUIDs (36) and most client schemes fit well within. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
const KEY_RE = new RegExp(`^[\\x21-\\x7e]{1,${MAX_IDEMPOTENCY_KEY_LENGTH}}$`);

export interface IdempotencyOutcome {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** The key store (src/db/idempotency-keys.ts). */
export interface IdempotencyPort {
  begin(
    orgId: string,
    key: string,
    fingerprint: string,
  ): Promise<
    | { kind: 'new'; claim: string; reservation?: unknown }
    | { kind: 'replay'; outcome: IdempotencyOutcome }
    | { kind: 'mismatch' }
    | { kind: 'in_flight' }
  >;
  reserve(orgId: string, key: string, claim: string, reservation: unknown): Promise<void>;
  complete(orgId: string, key: string, claim: string, outcome: IdempotencyOutcome): Promise<void>;
  abandon(orgId: string, key: string, claim: string): Promise<void>;
}

/** Statuses a retry gets again; anything else lets the retry run anew. */
function isReplayable(status: number): boolean {
  return status < 500 && status !== 409 && status !== 429;
}

/** What makes two requests "the same": method, path and the body bytes. */
function fingerprintOf(ex: Exchange): string {
  return createHash('sha256').update(`${ex.method} ${ex.url}\n`).update(ex.rawBody).digest('base64url');
}

/**
 * The stored key: the user's id (a UUID: it holds no `/`, so no two users' keys can collide) before
 * the client's. The table keeps its (organisation, key) primary key, so instances of the previous
 * version keep working during a rolling upgrade; their unscoped rows expire within 24 h.
 */
export function scopedKey(userId: string, clientKey: string): string {
  return `${userId}/${clientKey}`;
}

export function idempotencyStage(keys: IdempotencyPort): Stage<Exchange> {
  return async function idempotency(ex, next) {
    const clientKey = ex.headers['idempotency-key'];
    if (clientKey === undefined || !ex.route!.idempotent) return next();
    if (!KEY_RE.test(clientKey))
      throw new InvalidRequestError(`Invalid Idempotency-Key: 1-${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters`);
    const orgId = ex.principal!.org_id;
    const key = scopedKey(ex.principal!.user_id, clientKey);
    const begun = await keys.begin(orgId, key, fingerprintOf(ex));
    if (begun.kind === 'mismatch') throw new UnprocessableError('Idempotency-Key was already used with a different request');
    if (begun.kind === 'in_flight') throw new IdempotencyKeyInUseError();
    if (begun.kind === 'replay') {
      const { status, body, headers } = begun.outcome;
      ex.reply = { status, body, headers: { ...headers, 'Idempotent-Replayed': 'true' } };
      return;
    }
    const { claim, reservation } = begun;
    ex.idempotency = {
      ...(reservation === undefined ? {} : { prior: reservation }),
      reserve: (value) => keys.reserve(orgId, key, claim, value),
    };
    let outcome: IdempotencyOutcome | null = null;
    try {
      await next();
      const reply = ex.reply;
      if (reply && 'status' in reply && !('raw' in reply))
        outcome = { status: reply.status, body: reply.body, ...(reply.headers ? { headers: reply.headers } : {}) };
    } catch (err) {
      if (err instanceof AppError && err.status < 500) outcome = { status: err.status, body: { error: err.message, status: err.status } };
      await settle(keys, ex, orgId, key, begun.claim, outcome);
      throw err;
    }
    await settle(keys, ex, orgId, key, begun.claim, outcome);
  };
}

/**
 * Stores a replayable outcome or gives the key up. A failure here must not turn the answer the
 * client is owed into an error: the key then stays `in_flight` until it counts as abandoned.
 */
async function settle(
  keys: IdempotencyPort,
  ex: Exchange,
  orgId: string,
  key: string,
  claim: string,
  outcome: IdempotencyOutcome | null,
): Promise<void> {
  try {
    if (outcome && isReplayable(outcome.status)) await keys.complete(orgId, key, claim, outcome);
    else await keys.abandon(orgId, key, claim);
  } catch (err) {
    ex.log.warn({ err }, 'could not record the Idempotency-Key outcome');
  }
}
