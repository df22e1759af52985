/**
 * One delivery attempt: POST the signed body to the endpoint's checked, pinned address, within a
 * deadline, reading at most a bounded part of the answer. 2xx is success; anything else
 * (redirects included: they are not followed) is a failure with a short reason for the log.
 */
import { requestPinned } from '../capabilities/index.js';
import { SERVICE_VERSION } from '../version.js';
import type { AttemptOutcome } from './delivery-store.js';
import { checkTarget, type TargetPolicy } from './target-policy.js';

export interface SendOptions extends TargetPolicy {
  timeoutMs: number;
  maxResponseBytes: number;
  /** Stops the attempt (shutdown). */
  signal?: AbortSignal;
}

const USER_AGENT = `agent-session-service-webhooks/${SERVICE_VERSION}`;

export async function sendAttempt(url: string, body: string, headers: Record<string, string>, opts: SendOptions): Promise<AttemptOutcome> {
  const startedAt = new Date();
  const t0 = performance.now();
  const done = (status: number | null, error: string | null): AttemptOutcome => ({
    ok: error === null && status !== null && status >= 200 && status < 300,
    status,
    error,
    latencyMs: performance.now() - t0,
    startedAt,
  });
  const timeout = AbortSignal.timeout(opts.timeoutMs);
  const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
  try {
    const target = new URL(url);
    const checked = await checkTarget(target, opts);
    if (!checked.ok) return done(null, `refused: ${checked.reason}`);
    const payload = Buffer.from(body, 'utf8');
    const res = await requestPinned({
      url: target,
      method: 'POST',
      address: checked.target.address,
      family: checked.target.family,
      headers: {
        'content-type': 'application/json',
        'content-length': String(payload.length),
        'user-agent': USER_AGENT,
        ...headers,
      },
      body: payload,
      signal,
    });
    // The answer is read (bounded) so the deadline covers it, then dropped: receivers' bodies are not stored.
    await res.readBody(opts.maxResponseBytes);
    return done(res.status, res.status >= 200 && res.status < 300 ? null : `HTTP ${res.status}`);
  } catch (err) {
    if (timeout.aborted) return done(null, `timed out after ${opts.timeoutMs} ms`);
    if (opts.signal?.aborted) return done(null, 'interrupted: the instance is shutting down');
    return done(null, networkError(err));
  }
}

function networkError(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  const message = err instanceof Error ? err.message : String(err);
  const text = typeof code === 'string' && !message.includes(code) ? `${code} ${message}` : message;
  return text.slice(0, 300);
}
