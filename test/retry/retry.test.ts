import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { retrier, retry, waitUntil, type RetryEvent, type RetryPolicy } from '../../src/retry/index.js';

const policy: RetryPolicy = {
  name: 'test',
  maxAttempts: 4,
  backoff: { firstMs: 10, growth: 'exponential', maxMs: 1000, jitter: 'none' },
};

/** A function failing `failures` times before answering, counting its calls. */
function flaky(failures: number, make = (n: number) => new Error(`fail ${n}`)) {
  let calls = 0;
  const fn = async () => {
    calls++;
    if (calls <= failures) throw make(calls);
    return 'done';
  };
  return { fn, calls: () => calls };
}

describe('retry - retry()', () => {
  it('retries until success, pausing by the backoff and telling onRetry', async () => {
    const sleeps: number[] = [];
    const events: RetryEvent[] = [];
    const f = flaky(3);
    const out = await retry(f.fn, policy, { sleep: async (ms) => void sleeps.push(ms), onRetry: (e) => events.push(e) });
    assert.equal(out, 'done');
    assert.equal(f.calls(), 4);
    assert.deepEqual(sleeps, [10, 20, 40]);
    assert.deepEqual(
      events.map((e) => [e.attempt, e.pauseMs, (e.err as Error).message, e.policy.name]),
      [
        [1, 10, 'fail 1', 'test'],
        [2, 20, 'fail 2', 'test'],
        [3, 40, 'fail 3', 'test'],
      ],
    );
  });

  it('gives up after maxAttempts with the last error', async () => {
    const f = flaky(10);
    await assert.rejects(retry(f.fn, policy, { sleep: async () => {} }), (err: Error) => err.message === 'fail 4');
    assert.equal(f.calls(), 4);
  });

  it('does not retry what the predicate calls final', async () => {
    const f = flaky(3, (n) => Object.assign(new Error(`fail ${n}`), { final: n === 2 }));
    await assert.rejects(retry(f.fn, policy, { sleep: async () => {}, retryable: (err) => !(err as { final: boolean }).final }), /fail 2/);
    assert.equal(f.calls(), 2);
  });

  it('takes the pause a failure asks for', async () => {
    const sleeps: number[] = [];
    const f = flaky(2);
    await retry(f.fn, policy, { sleep: async (ms) => void sleeps.push(ms), pauseFor: () => 7 });
    assert.deepEqual(sleeps, [7, 7]);
  });

  it('cuts the last pause so one last attempt starts at the deadline, then stops', async () => {
    let clock = 0;
    const sleeps: number[] = [];
    const f = flaky(100);
    const withDeadline = { ...policy, maxAttempts: Number.POSITIVE_INFINITY, deadlineMs: 100 };
    await assert.rejects(
      retry(f.fn, withDeadline, {
        now: () => clock,
        sleep: async (ms) => {
          sleeps.push(ms);
          clock += ms;
        },
      }),
      /fail 5/,
    );
    // 10 + 20 + 40 = 70 ms slept; the next pause (80 ms) would end at 150 > 100, so it is cut to 30.
    assert.deepEqual(sleeps, [10, 20, 40, 30]);
  });

  it('an abort during a pause rejects with the signal reason and stops calling', async () => {
    const ac = new AbortController();
    const f = flaky(100);
    const slow = { ...policy, backoff: { ...policy.backoff, firstMs: 60_000, maxMs: 60_000 } };
    const running = retry(f.fn, slow, { signal: ac.signal });
    setTimeout(() => ac.abort(new Error('stopped')), 20);
    const started = Date.now();
    await assert.rejects(running, /stopped/);
    assert.ok(Date.now() - started < 5_000, 'the pause was cut short');
    assert.equal(f.calls(), 1);
  });

  it('pauses for real with the default sleep', async () => {
    const f = flaky(2);
    const started = performance.now();
    const short = { ...policy, backoff: { ...policy.backoff, firstMs: 15 } };
    assert.equal(await retry(f.fn, short), 'done');
    assert.ok(performance.now() - started >= 40, 'slept 15 + 30 ms');
  });
});

describe('retry - retrier()', () => {
  it('counts attempts and lets the caller throw its own error', async () => {
    const loop = retrier({ ...policy, maxAttempts: 3 }, { sleep: async () => {} });
    const seen: number[] = [];
    for (;;) {
      seen.push(loop.attempt);
      if (!(await loop.failed('conflict'))) break;
    }
    assert.deepEqual(seen, [1, 2, 3]);
  });

  it('a pause of 0 is taken at once, without a timer', async () => {
    const loop = retrier({ ...policy, backoff: { ...policy.backoff, immediateRetries: 2 } });
    const started = performance.now();
    assert.equal(await loop.failed(new Error('x')), true);
    assert.equal(await loop.failed(new Error('x')), true);
    assert.equal(loop.attempt, 3);
    assert.ok(performance.now() - started < 5);
  });

  it('rejects with the abort reason once the signal fired', async () => {
    const ac = new AbortController();
    ac.abort(new Error('gone'));
    const loop = retrier(policy, { signal: ac.signal, sleep: async () => {} });
    await assert.rejects(loop.failed(new Error('x')), /gone/);
  });
});

describe('retry - waitUntil()', () => {
  it('asks until the answer is yes, pausing by the policy', async () => {
    const sleeps: number[] = [];
    let asks = 0;
    const done = await waitUntil(async () => ++asks === 3, policy, { sleep: async (ms) => void sleeps.push(ms) });
    assert.equal(done, true);
    assert.equal(asks, 3);
    assert.deepEqual(sleeps, [10, 20]);
  });

  it('says false once the policy gives up, after its last ask', async () => {
    let asks = 0;
    const done = await waitUntil(async () => (asks++, false), policy, { sleep: async () => {} });
    assert.equal(done, false);
    assert.equal(asks, policy.maxAttempts);
  });
});
