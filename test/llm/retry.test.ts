import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { LlmError, type LlmStreamEvent } from '../../src/llm/index.js';
import { parseRetryAfterMs, toLlmError } from '../../src/llm/errors.js';
import { defaultLlmRetryOptions, streamWithRetries } from '../../src/llm/retry.js';
import { collectUntilError } from './provider-conformance.js';

function failing(errors: unknown[], sleeps: number[], maxRetryAfterMs = 60_000) {
  let calls = 0;
  const open = async function* (): AsyncGenerator<LlmStreamEvent> {
    const err = errors[calls++];
    if (err) throw err;
    yield { type: 'text_delta', text: 'ok' };
  };
  const opts = { ...defaultLlmRetryOptions(), maxRetryAfterMs, sleep: async (ms: number) => void sleeps.push(ms) };
  return { stream: streamWithRetries(open, undefined, opts), calls: () => calls };
}

describe('llm retries and error mapping', () => {
  test('retry - a Retry-After beyond maxRetryAfterMs surfaces at once', async () => {
    const sleeps: number[] = [];
    const run = failing([new LlmError('rate_limit', { retryAfterMs: 120_000 })], sleeps);
    const { error } = await collectUntilError(run.stream);
    assert.equal((error as LlmError).kind, 'rate_limit');
    assert.deepEqual(sleeps, []);
  });

  test('retry - exhausted quota (insufficient_quota) is a rate_limit that is not retried', async () => {
    const sleeps: number[] = [];
    const quota = Object.assign(new Error('You exceeded your quota'), { status: 429, code: 'insufficient_quota' });
    const { error } = await collectUntilError(failing([quota], sleeps).stream);
    assert.equal((error as LlmError).kind, 'rate_limit');
    assert.equal((error as LlmError).retryable, false);
    assert.deepEqual(sleeps, []);
  });

  test('retry - bad_request is not retried; network and server errors are, with growing delays', async () => {
    const sleeps: number[] = [];
    const bad = await collectUntilError(failing([Object.assign(new Error('x'), { status: 400 })], sleeps).stream);
    assert.equal((bad.error as LlmError).kind, 'bad_request');
    const terminated = Object.assign(new TypeError('terminated'), {
      cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }),
    });
    const run = failing([terminated, Object.assign(new Error('x'), { status: 503 }), terminated], sleeps);
    const { events, error } = await collectUntilError(run.stream);
    assert.equal(error, undefined);
    assert.equal(events.length, 1);
    assert.equal(sleeps.length, 3);
    assert.ok(sleeps[0]! < sleeps[2]!, `delays grow: ${sleeps}`);
  });

  test('errors - classification by status, vendor code and transport markers', () => {
    assert.equal(toLlmError({ status: 403 }).kind, 'auth');
    assert.equal(toLlmError({ status: 408 }).kind, 'network');
    assert.equal(toLlmError({ status: 422 }).kind, 'bad_request');
    assert.equal(toLlmError({ status: 529 }).kind, 'server');
    assert.equal(toLlmError({ error: { type: 'overloaded_error' } }).kind, 'server');
    assert.equal(toLlmError(Object.assign(new Error('Connection error.'), { name: 'APIConnectionError' })).kind, 'network');
    assert.equal(toLlmError(Object.assign(new Error('connect'), { code: 'ECONNREFUSED' })).kind, 'network');
    const e = toLlmError(Object.assign(new Error('secret body sk-123'), { status: 500 }));
    assert.doesNotMatch(e.message, /sk-123/);
    assert.equal(e.cause, undefined);
  });

  test('errors - Retry-After in seconds, HTTP date, and retry-after-ms', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    assert.equal(parseRetryAfterMs(new Headers({ 'retry-after': '3' })), 3000);
    assert.equal(parseRetryAfterMs(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:05 GMT' }), now), 5000);
    assert.equal(parseRetryAfterMs({ 'retry-after-ms': '250', 'retry-after': '9' }), 250);
    assert.equal(parseRetryAfterMs(new Headers()), undefined);
  });
});
