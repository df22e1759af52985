import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DeadlineError, withDeadline } from '../../src/retry/index.js';

describe('retry - withDeadline', () => {
  it('passes the value of a promise that settles in time', async () => {
    assert.equal(await withDeadline(Promise.resolve(42), 1_000), 42);
  });

  it('passes the rejection of a promise that fails in time', async () => {
    await assert.rejects(withDeadline(Promise.reject(new Error('down')), 1_000), /down/);
  });

  it('rejects with a DeadlineError carrying the message when the promise is late', async () => {
    const never = new Promise<never>(() => {});
    const started = Date.now();
    await assert.rejects(withDeadline(never, 30, 'no answer'), (err: unknown) => {
      assert.ok(err instanceof DeadlineError);
      assert.equal(err.message, 'no answer');
      return true;
    });
    assert.ok(Date.now() - started >= 25);
  });

  it('leaves no timer behind once the promise settled (the process can exit)', async () => {
    const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    await withDeadline(Promise.resolve(1), 60_000);
    const after = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    assert.equal(after, before);
  });
});
