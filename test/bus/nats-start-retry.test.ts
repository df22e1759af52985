import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isRetryableStartError } from '../../src/bus/nats/nats-bus.js';

const named = (name: string, message: string, cause?: unknown) => Object.assign(new Error(message, { cause }), { name });

describe('NATS start-up: which failures are waited out', () => {
  it('no server, timeouts, no responders, closed connections: retried (also wrapped)', () => {
    assert.ok(
      isRetryableStartError(
        new Error('cannot connect to NATS (nats://n1:4222): connection refused', { cause: named('ConnectionError', 'connection refused') }),
      ),
    );
    assert.ok(isRetryableStartError(named('TimeoutError', 'timeout')));
    assert.ok(isRetryableStartError(named('RequestError', 'request failed', named('NoResponders', 'no responders'))));
    assert.ok(isRetryableStartError(named('ClosedConnectionError', 'closed connection')));
  });

  it('credentials, permissions, TLS and anything unknown: not retried', () => {
    assert.ok(
      !isRetryableStartError(
        new Error('cannot connect to NATS (nats://n1:4222): Authorization Violation', {
          cause: named('AuthorizationError', "'Authorization Violation'"),
        }),
      ),
    );
    assert.ok(!isRetryableStartError(named('ConnectionError', 'Authorization Violation')));
    assert.ok(
      !isRetryableStartError(named('PermissionViolationError', 'Permissions Violation for Publish to "$JS.API.STREAM.CREATE.TURNS"')),
    );
    assert.ok(!isRetryableStartError(named('ConnectionError', 'unable to verify the first certificate')));
    assert.ok(!isRetryableStartError(new RangeError('shards must be an integer >= 1')));
    assert.ok(!isRetryableStartError('not an error'));
  });
});
