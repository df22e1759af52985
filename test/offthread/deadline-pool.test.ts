import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createDeadlinePool, type DeadlinePoolOptions } from '../../src/offthread/deadline-pool.js';

const errors = {
  timeout: () => new Error('timeout'),
  memory: () => new Error('memory'),
  busy: () => new Error('busy'),
  tooMany: ({ reason }: { reason: string }) => new Error(`too many: ${reason}`),
  closed: () => new Error('closed'),
  failed: (message: string) => new Error(`failed: ${message}`),
};

function pool(t: { after(fn: () => unknown): void }, worker: string, opts: Partial<DeadlinePoolOptions> = {}) {
  const p = createDeadlinePool(
    { worker: new URL(`./fixtures/${worker}`, import.meta.url), workers: 1, timeoutMs: 1000, queueMax: 10, resourceLimits: {}, ...opts },
    errors,
  );
  t.after(() => p.close());
  return p;
}

describe('deadline pool (piscina)', () => {
  it('counts the deadline from the moment a worker starts the job, not while it waits; past it the worker is replaced', async (t) => {
    const p = pool(t, 'spin-worker.js', { timeoutMs: 800 });
    await p.run({ ms: 0 });
    const first = p.run<number>({ ms: 500 });
    const second = p.run<number>({ ms: 500 }); // waits ~500 ms, then has its own 800 ms
    assert.equal(p.stats().queued, 1);
    const [a, b] = await Promise.all([first, second]);
    assert.equal(a, b, 'one worker ran both');
    await assert.rejects(p.run({ ms: 5000 }), /^Error: timeout$/);
    assert.equal(p.stats().replaced, 1);
    assert.notEqual(await p.run<number>({ ms: 0 }), a, 'a fresh worker');
  });

  it('a worker that cannot start fails the jobs instead of leaving them waiting', async (t) => {
    const p = pool(t, 'broken-worker.js');
    await assert.rejects(p.run({}), /failed: cannot start/);
    await assert.rejects(p.run({}), /failed: cannot start/);
  });
});
