import assert from 'node:assert/strict';
import { it } from 'node:test';
import { connect } from '@nats-io/transport-node';
import { OPS_SUBJECT_PREFIX } from '../../src/bus/nats/ops-service.js';
import { createProcessPresence } from '../../src/bus/nats/process-presence.js';
import { natsClientOptions, startNatsServer } from '../helpers/nats-server.js';

it('nats process presence - a live process answers, a gone one is known at once', async (t) => {
  const server = await startNatsServer({ t });
  const a = await connect(await natsClientOptions(server));
  t.after(() => a.close());
  const b = await connect(await natsClientOptions(server));
  const me = createProcessPresence(a);
  const other = createProcessPresence(b);
  await b.flush();
  assert.equal(await me.check(me.id), 'alive');
  assert.equal(await me.check(other.id), 'alive');
  await b.close(); // as a SIGKILL does: the connection, and its subscription, are gone
  // A request racing the server's cleanup of b's connection can still be routed to b and time out;
  // once the server has dropped b's subscription, "gone" must be known at once, not at the timeout.
  let gone = false;
  for (let i = 0; i < 20 && !gone; i++) gone = (await me.check(other.id)) === 'gone';
  assert.ok(gone, 'a closed process is known gone');
  const t0 = Date.now();
  assert.equal(await me.check(other.id), 'gone');
  assert.ok(Date.now() - t0 < 200, `known gone without waiting for the timeout: ${Date.now() - t0} ms`);
});

it('nats process presence - a process that is connected but does not answer (frozen) is silent, not gone', async (t) => {
  const server = await startNatsServer({ t });
  const a = await connect(await natsClientOptions(server));
  t.after(() => a.close());
  const frozen = await connect(await natsClientOptions(server));
  t.after(() => frozen.close());
  const me = createProcessPresence(a);
  // What a SIGSTOPped process leaves: its subscription, held by the server, and no answer.
  const id = 'frozen-process';
  frozen.subscribe(`${OPS_SUBJECT_PREFIX}.${id}.alive`, { callback: () => undefined });
  await frozen.flush();
  assert.equal(await me.check(id), 'silent');
});
