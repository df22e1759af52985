import { type LlmError, toLlmError } from './errors.js';
import type { LlmStreamEvent } from './types.js';

export const DEFAULT_LLM_MAX_RETRIES = 3;
export const DEFAULT_LLM_RETRY_BASE_DELAY_MS = 500;
export const DEFAULT_LLM_RETRY_MAX_DELAY_MS = 30_000;
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

/** Sleeps `ms` milliseconds; rejects with the abort reason if the signal fires first. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortReason(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortReason(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
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

/** The error an aborted stream rejects with: the signal's reason, or an AbortError. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The operation was aborted', 'AbortError');
}

function retryDelayMs(attempt: number, err: LlmError, opts: LlmRetryOptions): number | undefined {
  if (err.retryAfterMs !== undefined) return err.retryAfterMs <= opts.maxRetryAfterMs ? err.retryAfterMs : undefined;
  const exp = Math.min(opts.maxDelayMs, opts.baseDelayMs * 2 ** attempt);
  return Math.round(exp * (0.5 + Math.random() * 0.5));
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
  for (let attempt = 0; ; attempt++) {
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
      const delay = yielded || !llmErr.retryable || attempt >= opts.maxRetries ? undefined : retryDelayMs(attempt, llmErr, opts);
      if (delay === undefined) throw llmErr;
      await opts.sleep(delay, signal);
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
