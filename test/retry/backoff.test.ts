import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pauseMs, retryPolicies } from '../../src/retry/index.js';

describe('retry - backoff', () => {
  it('grows exponentially up to the cap, without jitter', () => {
    const b = retryPolicies.natsReconnect.backoff;
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6, 7].map((n) => pauseMs(b, n)),
      [250, 500, 1000, 2000, 4000, 5000, 5000],
    );
  });

  it('grows linearly up to the cap', () => {
    const b = retryPolicies.clusterForming.backoff;
    assert.deepEqual(
      [1, 2, 10, 11].map((n) => pauseMs(b, n)),
      [100, 200, 1000, 1000],
    );
  });

  it('full jitter spans [0, d]; half jitter [d/2, d]', () => {
    const full = { firstMs: 1000, growth: 'constant', maxMs: 1000, jitter: 'full' } as const;
    assert.equal(
      pauseMs(full, 3, () => 0),
      0,
    );
    assert.equal(
      pauseMs(full, 3, () => 0.999),
      999,
    );
    const half = { ...full, jitter: 'half' } as const;
    assert.equal(
      pauseMs(half, 3, () => 0),
      500,
    );
    assert.equal(
      pauseMs(half, 3, () => 0.999),
      1000,
    );
  });

  it('immediate retries come first, then the backoff by failure count', () => {
    const b = retryPolicies.appendConflict.backoff;
    const top = () => 0.9999;
    assert.deepEqual(
      [1, 2, 3, 10, 60].map((n) => pauseMs(b, n, top)),
      [0, 0, 3, 10, 50],
    );
  });
});
