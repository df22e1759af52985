import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadPatiently } from '../../actors/session/patient-load.js';

class Down extends Error {}
const isTransient = (err: unknown) => err instanceof Down;

/** A load that fails with `errors` in turn, then answers 'ok'; counts its calls. */
function flaky(errors: Error[]) {
  const f = async () => {
    f.calls++;
    const err = errors.shift();
    if (err) throw err;
    return 'ok';
  };
  f.calls = 0;
  return f;
}

describe('loadPatiently', () => {
  it('retries transient failures until the load answers', async () => {
    const load = flaky([new Down(), new Down(), new Down()]);
    assert.equal(await loadPatiently(load, { waitMs: 5_000, isTransient, firstDelayMs: 5 }), 'ok');
    assert.equal(load.calls, 4);
  });

  it('throws a non-transient error at once (a real bug is not waited on)', async () => {
    const load = flaky([new TypeError('bug')]);
    await assert.rejects(loadPatiently(load, { waitMs: 5_000, isTransient, firstDelayMs: 5 }), TypeError);
    assert.equal(load.calls, 1);
  });

  it('gives up with the last error once waitMs has passed', async () => {
    const load = flaky(Array.from({ length: 1_000 }, () => new Down()));
    const started = Date.now();
    await assert.rejects(loadPatiently(load, { waitMs: 200, isTransient, firstDelayMs: 10, maxDelayMs: 20 }), Down);
    const took = Date.now() - started;
    assert.ok(took >= 200 && took < 1_000, `gave up after ${took} ms`);
    assert.ok(load.calls > 2);
  });

  it('stops waiting when the signal fires', async () => {
    const ac = new AbortController();
    const load = flaky(Array.from({ length: 1_000 }, () => new Down()));
    setTimeout(() => ac.abort(), 50);
    const started = Date.now();
    await assert.rejects(loadPatiently(load, { waitMs: 10_000, isTransient, signal: ac.signal, firstDelayMs: 5_000 }), Down);
    assert.ok(Date.now() - started < 1_000);
  });
});
