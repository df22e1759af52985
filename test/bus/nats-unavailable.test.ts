import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jetstream, jetstreamManager, JetStreamApiError } from '@nats-io/jetstream';
import { ClosedConnectionError, connect, ConnectionError, NoRespondersError, RequestError, TimeoutError } from '@nats-io/transport-node';
import { createAckedPublisher } from '../../src/bus/nats/acked-publisher.js';
import { isBusUnavailable } from '../../src/bus/index.js';
import { JetStreamErrorCodes } from '../../src/bus/nats/nats-errors.js';
import { toErrorReply } from '../../src/http/error-response.js';
import { createLogger } from '../../src/log.js';
import { natsClientOptions, startNatsServer } from '../helpers/nats-server.js';

/**
 * Chaos defect 1 (issue 13): errors of a NATS node going down reached the HTTP error mapping
 * as 500. The bus's "temporarily unavailable" errors become 503 + Retry-After; real bugs stay 500.
 */
const log = createLogger('silent');

/** JetStream API refusals as the server sends them (errors.json): status, code, description. */
function apiError(status: number, errCode: number, description: string): JetStreamApiError {
  return new JetStreamApiError({ code: status, err_code: errCode, description });
}

describe('bus unavailable - classification of nats.js errors', () => {
  it('errors of a real server: no stream taking a subject, a closed connection, a timeout are unavailable; a missing stream or a refused expectation is not', async (t) => {
    const server = await startNatsServer({ t });
    const nc = await connect(await natsClientOptions(server));
    t.after(() => nc.close());
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'U', subjects: ['u.>'] });
    const publisher = createAckedPublisher(nc, { timeoutMs: 5_000 });
    t.after(() => publisher.close());

    // A stream whose leader is being elected does not answer its subjects: no responders.
    const noStream = await publisher.publish('nostream.x', 'x').catch((err: unknown) => err);
    assert.ok(noStream instanceof NoRespondersError, String(noStream));
    assert.equal(isBusUnavailable(noStream), true);
    const noResponders = await nc.request('nobody.listens', 'x', { timeout: 1_000 }).catch((err: unknown) => err);
    assert.ok(noResponders instanceof RequestError, String(noResponders));
    assert.equal(isBusUnavailable(noResponders), true, 'a request without responders (nats.js wraps the cause)');
    // A subscriber that never answers: the request times out (a node that died holding the subscription).
    nc.subscribe('silent');
    const timedOut = await nc.request('silent', 'x', { timeout: 50 }).catch((err: unknown) => err);
    assert.ok(timedOut instanceof Error && [timedOut.name, (timedOut.cause as Error)?.name].includes('TimeoutError'), String(timedOut));
    assert.equal(isBusUnavailable(timedOut), true, `a timed-out request: ${String(timedOut)}`);

    const missing = await jsm.streams.info('NOPE').catch((err: unknown) => err);
    assert.ok(missing instanceof JetStreamApiError && missing.code === JetStreamErrorCodes.StreamNotFound, String(missing));
    assert.equal(isBusUnavailable(missing), false, 'a missing stream is a bug or a 404, not an outage');
    await publisher.publish('u.a', 'one');
    const conflict = await publisher.publish('u.a', 'two', { expect: { lastSubjectSequence: 0 } }).catch((err: unknown) => err);
    assert.ok(conflict instanceof JetStreamApiError && conflict.code === JetStreamErrorCodes.WrongLastSequence, String(conflict));
    assert.equal(isBusUnavailable(conflict), false);

    const closedConn = await connect(await natsClientOptions(server));
    await closedConn.close();
    const closed = await jetstream(closedConn)
      .publish('u.a', 'late')
      .catch((err: unknown) => err);
    assert.ok(closed instanceof ClosedConnectionError, String(closed));
    assert.equal(isBusUnavailable(closed), true);
  });

  it('JetStream refusals between leaders are unavailable, also as a cause; other errors are not', () => {
    const unavailable = [
      apiError(503, JetStreamErrorCodes.ClusterNotAvailable, 'JetStream system temporarily unavailable'),
      apiError(500, JetStreamErrorCodes.ClusterNotLeader, 'JetStream cluster can not handle request'),
      apiError(500, JetStreamErrorCodes.StreamOffline, 'stream is offline'),
      apiError(500, JetStreamErrorCodes.ConsumerOffline, 'consumer is offline'),
      apiError(503, JetStreamErrorCodes.LastSequenceUnavailable, 'expected last sequence per subject temporarily unavailable'),
      new TimeoutError(),
      new ConnectionError('connection refused'),
      new Error('append failed', { cause: new NoRespondersError('evt.0.x') }),
    ];
    for (const err of unavailable) assert.equal(isBusUnavailable(err), true, String(err));
    const bugs = [
      apiError(400, JetStreamErrorCodes.WrongLastSequence, 'wrong last sequence: 3'),
      apiError(400, JetStreamErrorCodes.StoreFailed, 'maximum messages per subject exceeded'),
      apiError(500, 10049, 'invalid JSON'),
      new TypeError("Cannot read properties of undefined (reading 'seq')"),
      new Error('invalid ack response'),
      new DOMException('The operation was aborted due to timeout', 'TimeoutError'),
      'not an error',
    ];
    for (const err of bugs) assert.equal(isBusUnavailable(err), false, String(err));
  });

  it('the HTTP error mapping answers bus outages 503 with Retry-After and keeps bugs 500', () => {
    const outage = toErrorReply(new Error('enqueue failed', { cause: new NoRespondersError('turn.x') }), log);
    assert.equal(outage.status, 503);
    assert.deepEqual(outage.body, { error: 'Service unavailable', status: 503 });
    assert.ok(Number(outage.headers?.['Retry-After']) > 0);
    const election = toErrorReply(apiError(500, JetStreamErrorCodes.StreamOffline, 'stream is offline'), log);
    assert.equal(election.status, 503);
    const bug = toErrorReply(apiError(400, JetStreamErrorCodes.WrongLastSequence, 'wrong last sequence: 3'), log);
    assert.equal(bug.status, 500);
    assert.equal(bug.headers, undefined);
  });
});
