import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { RequestError, RequestOne } from '@nats-io/nats-core/internal';
import { connect } from '@nats-io/transport-node';
import { shareRequestCancelError } from '../../src/bus/nats/request-cancel.js';
import { natsClientOptions, startNatsServer } from '../helpers/nats-server.js';

/** nats.js's errors module as its request class sees it (CommonJS, one instance per process). */
function natsErrorsModule(): { RequestError: typeof RequestError } {
  const require = createRequire(import.meta.url);
  return require(join(dirname(require.resolve('@nats-io/nats-core')), 'errors.js'));
}

test('nats request cancel - answered requests build no RequestError; a request cancelled without a reason still rejects with one', async (t) => {
  assert.equal(shareRequestCancelError(), true);
  assert.equal(shareRequestCancelError(), true, 'idempotent');

  const server = await startNatsServer({ t });
  const nc = await connect(await natsClientOptions(server, { noAsyncTraces: true }));
  t.after(() => nc.close());
  nc.subscribe('echo', {
    callback: (_err, m) => {
      m.respond(m.data);
    },
  });
  await nc.flush();

  const errors = natsErrorsModule();
  const Original = errors.RequestError;
  let built = 0;
  errors.RequestError = class CountedRequestError extends Original {
    constructor(...args: ConstructorParameters<typeof RequestError>) {
      super(...args);
      built++;
    }
  };
  t.after(() => {
    errors.RequestError = Original;
  });

  const replies = await Promise.all(Array.from({ length: 100 }, (_, i) => nc.request('echo', `m${i}`, { timeout: 5000 })));
  assert.deepEqual(
    replies.map((m) => m.string()),
    Array.from({ length: 100 }, (_, i) => `m${i}`),
  );
  assert.equal(built, 0, 'nats.js built a RequestError for answered requests');

  // A request really cancelled without a reason keeps nats.js's behaviour.
  const mux = { cancel: () => undefined };
  const pending = [
    new RequestOne(mux as never, 'x', { timeout: 60_000 }, false),
    new RequestOne(mux as never, 'y', { timeout: 60_000 }, false),
  ];
  const outcomes = pending.map((r) => (r as unknown as { deferred: Promise<unknown> }).deferred.catch((err: unknown) => err));
  for (const r of pending) r.cancel();
  const [a, b] = await Promise.all(outcomes);
  assert.ok(a instanceof RequestError, 'rejected with a RequestError');
  assert.equal((a as Error).message, 'cancelled');
  assert.equal(a, b, 'one shared error, not one per request');
});
