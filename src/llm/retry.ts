import { abortableSleep, abortReason, type RetryPolicy, retrier, retryPolicies } from '../retry/index.js';
import { type LlmError, toLlmError } from './errors.js';
import type { LlmStreamEvent } from './types.js';

const { llmCall } = retryPolicies;
export const DEFAULT_LLM_MAX_RETRIES = llmCall.maxAttempts - 1;
export const DEFAULT_LLM_RETRY_BASE_DELAY_MS = llmCall.backoff.firstMs;
export const DEFAULT_LLM_RETRY_MAX_DELAY_MS = llmCall.backoff.maxMs;
/** A Retry-After longer than this is not waited for: the error surfaces at once. */
export const DEFAULT_LLM_MAX_RETRY_AFTER_MS = 60_000;

export interface LlmRetryOptions {
  /** Retries after the first attempt (default 3); 0 disables retrying. */
  maxRetries: number;
  /** Delay before retry n is base * 2^n ms with jitter in [50%, 100%] (default 500). */
  baseDelayMs: number;
  /** Upper bound of the exponential delay (default 30 000 ms). */
  maxDelayMs: number;
  /** Longest vendor Retry-After honoured (default 60 000 ms). */
  maxRetryAfterMs: number;
  /** Injected for tests; must reject with the signal's reason when it aborts. */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** Fresh defaults (style rule 15). */
export function defaultLlmRetryOptions(): LlmRetryOptions {
  return {
    maxRetries: DEFAULT_LLM_MAX_RETRIES,
    baseDelayMs: DEFAULT_LLM_RETRY_BASE_DELAY_MS,
    maxDelayMs: DEFAULT_LLM_RETRY_MAX_DELAY_MS,
    maxRetryAfterMs: DEFAULT_LLM_MAX_RETRY_AFTER_MS,
    sleep: abortableSleep,
  };
}

/**
 * Runs `open()` and re-runs it on retryable failures (429, 5xx, network) that happen
 * before the first event reached the consumer; once output has been yielded a retry would
 * duplicate it, so later failures surface as they are. Honours Retry-After. Anything thrown
 * is normalised to `LlmError`, except the abort reason after `signal` fired.
 */
export async function* streamWithRetries(
  open: () => AsyncIterable<LlmStreamEvent>,
  signal: AbortSignal | undefined,
  opts: LlmRetryOptions,
): AsyncGenerator<LlmStreamEvent> {
  const attempts = retrier<LlmError>(llmPolicy(opts), {
    signal,
    sleep: opts.sleep,
    retryable: (err) => isRetryable(err, opts),
    pauseFor: (err) => err.retryAfterMs,
  });
  for (;;) {
    let yielded = false;
    try {
      for await (const event of open()) {
        yielded = true;
        yield event;
      }
      if (signal?.aborted) throw abortReason(signal);
      return;
    } catch (err) {
      if (signal?.aborted) throw abortReason(signal);
      const llmErr = toLlmError(err);
      if (yielded || !(await attempts.failed(llmErr))) throw llmErr;
    }
  }
}

/** Runs a unary call (model listing) with the same retry policy as streams. */
export async function callWithRetries<T>(call: () => Promise<T>, signal: AbortSignal | undefined, opts: LlmRetryOptions): Promise<T> {
  let result: T | undefined;
  // biome-ignore lint/correctness/useYield: the unary call is an empty stream so that it shares the stream retry loop
  const once = async function* (): AsyncGenerator<LlmStreamEvent> {
    result = await call();
  };
  for await (const _ of streamWithRetries(once, signal, opts)) {
    // no events: the call's result is captured above
  }
  return result as T;
}

/** The llmCall policy with a provider record's numbers. */
function llmPolicy(opts: LlmRetryOptions): RetryPolicy {
  return {
    ...llmCall,
    maxAttempts: opts.maxRetries + 1,
    backoff: { ...llmCall.backoff, firstMs: opts.baseDelayMs, maxMs: opts.maxDelayMs },
  };
}

/** A retryable error, unless it asks for a wait longer than the caller honours (it surfaces at once). */
function isRetryable(err: LlmError, opts: LlmRetryOptions): boolean {
  return err.retryable && (err.retryAfterMs === undefined || err.retryAfterMs <= opts.maxRetryAfterMs);
}
