import { jetstreamManager, type MsgRequest, type StoredMsg } from '@nats-io/jetstream';
import { type NatsConnection, TimeoutError } from '@nats-io/transport-node';
import { retry, retryPolicies } from '../../retry/index.js';

/** `STREAM.MSG.GET` on a stream: the message, or null when there is none. */
export type LeaderGet = (stream: string, query: MsgRequest) => Promise<StoredMsg | null>;

/** How long one try of a get waits for its answer before it is sent again, in ms. */
export const DEFAULT_GET_TRY_MS = 1_000;

export interface LeaderGetOptions {
  /** The whole get gives up after about this long, as any request of the bus does, in ms. */
  timeoutMs: number;
  /** One try's wait, in ms (default 1000). */
  tryMs?: number;
}

/**
 * Gets from a stream's leader, sent again every `tryMs` until `timeoutMs` has passed. While a
 * stream elects a leader (4-9 s after its leader's node died, a server constant in 2.10) nobody
 * answers a get, and the request is dropped rather than refused: with one 5 s request the
 * caller waited up to 5 s after the new leader was there, and its retry as long again (the turn
 * of a running session reads its claim and its tail before every append). A get changes nothing,
 * so a copy is harmless; the answer now comes within a second of the election.
 */
export async function createLeaderGet(nc: NatsConnection, { timeoutMs, tryMs = DEFAULT_GET_TRY_MS }: LeaderGetOptions): Promise<LeaderGet> {
  // No account-info check: it needs the meta leader, which a get does not.
  const quick = await jetstreamManager(nc, { timeout: Math.min(tryMs, timeoutMs), checkAPI: false });
  const policy = { ...retryPolicies.leaderGet, maxAttempts: Math.max(1, Math.ceil(timeoutMs / tryMs)) };
  const retryable = (err: unknown) => err instanceof TimeoutError;
  return (stream, query) => retry(() => quick.streams.getMessage(stream, query), policy, { retryable });
}
