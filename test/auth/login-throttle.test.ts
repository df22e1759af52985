import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLoginThrottle } from '../../src/auth/login-throttle.js';
import { TooManyRequestsError } from '../../src/errors.js';

describe('login throttle', () => {
  it('refuses an email past its window with Retry-After; a success gives the attempts back', () => {
    let now = 1_000_000;
    const throttle = createLoginThrottle({ maxPerEmail: 2, windowMs: 60_000, now: () => now });
    throttle.attempt('A@x.io', '10.0.0.1');
    throttle.attempt('a@x.io', '10.0.0.2');
    now += 15_000;
    assert.throws(
      () => throttle.attempt('a@X.io', '10.0.0.3'),
      (err: unknown) => err instanceof TooManyRequestsError && err.retryAfterS === 45,
    );
    now += 45_000;
    throttle.attempt('a@x.io', '10.0.0.1').succeeded();
    throttle.attempt('a@x.io', '10.0.0.1');
    throttle.attempt('a@x.io', '10.0.0.1');
    assert.throws(() => throttle.attempt('a@x.io', '10.0.0.1'), TooManyRequestsError);
  });

  it('tracks at most maxKeys keys and drops the least recently used, not the oldest', () => {
    const throttle = createLoginThrottle({ maxPerEmail: 1, maxKeys: 4 });
    throttle.attempt('a@x.io', 'ip1');
    throttle.attempt('b@x.io', 'ip2');
    // A refused retry for a reads a's window again, so b's keys are now the least recently used.
    assert.throws(() => throttle.attempt('a@x.io', 'ip9'), TooManyRequestsError);
    throttle.attempt('c@x.io', 'ip3');
    assert.equal(throttle.size(), 4);
    assert.throws(() => throttle.attempt('a@x.io', 'ip4'), TooManyRequestsError, 'a is still tracked');
    throttle.attempt('b@x.io', 'ip5'); // b was dropped, so its window starts afresh
  });
});
