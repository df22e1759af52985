import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, nkeys, type NatsConnection } from '@nats-io/transport-node';
import { createBus } from '../../src/bus/index.js';
import { newId } from '../../src/ids.js';
import { createLogger } from '../../src/log.js';
import { startTestApp } from '../helpers/app.js';
import {
  natsClientOptions,
  natsServerBin,
  natsServiceEnv,
  startNatsServer,
  type NatsServer,
  type NatsServerOptions,
} from '../helpers/nats-server.js';
import { assertLogIntegrity, createSession, getSession, sendMessage, watch } from '../turns/helpers.js';
import { runBusConformance } from './conformance.js';
import { createTestOperator } from '../helpers/nats-jwt.js';
import { natsHarness } from './nats-harness.js';
import { Svcm, type ServiceIdentity } from '@nats-io/services';
import { OPS_SERVICE_NAME, OPS_SUBJECT_PREFIX } from '../../src/bus/nats/ops-service.js';

const log = createLogger('silent');
/** The shipped permissions, used as they are. */
const AUTH_CONF = readFileSync(new URL('../../deploy/nats/auth.conf', import.meta.url), 'utf8');
type Role = 'api' | 'worker' | 'service';

/**
 * A server that requires TLS with client certificates and logs users in with deploy/nats/auth.conf;
 * `ops`: with its operator user uncommented (as the file says to enable it).
 */
function rolesServer({ ops = false } = {}): { options: Omit<NatsServerOptions, 't'>; passwords: Record<Role | 'ops', string> } {
  // Characters that must be percent-encoded in a URL, to show they are decoded.
  const pw = () => `p@ss:${randomBytes(9).toString('base64url')}`;
  const passwords = { api: pw(), worker: pw(), service: pw(), ops: pw() };
  const conf = ops ? AUTH_CONF.replace(/^(\s*)# (\{ user: ops,)/m, '$1$2') : AUTH_CONF;
  assert.ok(!ops || conf !== AUTH_CONF, 'auth.conf has a commented ops user');
  return {
    passwords,
    options: {
      secure: false,
      tls: true,
      files: { 'auth.conf': conf },
      config: 'include ./auth.conf',
      env: {
        NATS_API_PASSWORD: passwords.api,
        NATS_WORKER_PASSWORD: passwords.worker,
        NATS_SERVICE_PASSWORD: passwords.service,
        ...(ops ? { NATS_OPS_PASSWORD: passwords.ops } : {}),
      },
    },
  };
}

/** NATS_URL with a role's credentials, and the server's TLS files. */
function as(server: NatsServer, user: string, password: string) {
  return { url: `nats://${user}:${encodeURIComponent(password)}@127.0.0.1:${server.port}`, auth: server.auth };
}

/** Resolves with the error that ends a subscription, or null if it stays open for `ms`. */
/**
 * The server's log once it shows `line` (or after `ms`): its stderr reaches this process as an
 * event, which a loaded CI had not handled yet when the refused call returned (2026-11-30).
 */
async function logOnceItShows(server: NatsServer, line: RegExp, ms = 5_000): Promise<string> {
  for (const deadline = Date.now() + ms; !line.test(server.log()) && Date.now() < deadline; ) {
    await new Promise((r) => setTimeout(r, 50));
  }
  return server.log();
}

async function subscriptionError(nc: NatsConnection, subject: string, ms = 1000): Promise<unknown> {
  const sub = nc.subscribe(subject);
  const ended = sub.closed.then(
    (err) => err ?? new Error('closed without an error'),
    (err: unknown) => err,
  );
  const quiet = new Promise((resolve) => setTimeout(() => resolve(null), ms).unref());
  const result = await Promise.race([ended, quiet]);
  if (!sub.isClosed()) sub.unsubscribe();
  return result;
}

/** Logs in over plain TCP (what nats.js never does when the server asks for TLS): the INFO line and whatever comes back. */
async function plaintextLogin(
  port: number,
  user: string,
  pass: string,
): Promise<{ info: Record<string, unknown>; reply: string; closed: boolean }> {
  const sock = createConnection({ host: '127.0.0.1', port });
  let text = '';
  sock.on('data', (d: Buffer) => void (text += d.toString()));
  const closed = new Promise<boolean>((resolve) => sock.once('close', () => resolve(true)));
  sock.on('error', () => undefined);
  while (!text.includes('\r\n')) await new Promise((r) => setTimeout(r, 10));
  const info = JSON.parse(text.slice('INFO '.length, text.indexOf('\r\n'))) as Record<string, unknown>;
  text = '';
  sock.write(`CONNECT ${JSON.stringify({ user, pass, verbose: false, protocol: 1 })}\r\nPING\r\n`);
  const hungUp = await Promise.race([closed, new Promise<boolean>((r) => setTimeout(() => r(false), 3000))]);
  sock.destroy();
  return { info, reply: text, closed: hungUp };
}

const { options: conformanceServer, passwords: conformancePasswords } = rolesServer();
runBusConformance({
  name: 'nats over TLS, logged in as deploy/nats/auth.conf user `service` (ROLE=all)',
  create: () => natsHarness({}, conformanceServer, (s) => as(s, 'service', conformancePasswords.service)),
});

describe('nats authentication: TLS, users and per-role permissions from deploy/nats/auth.conf', () => {
  it('the shipped server configs include auth.conf, and do not start without its passwords', () => {
    const passwords = { NATS_API_PASSWORD: 'a', NATS_WORKER_PASSWORD: 'b', NATS_SERVICE_PASSWORD: 'c' };
    for (const name of ['nats-server.conf', 'n1.conf', 'n2.conf', 'n3.conf']) {
      const file = fileURLToPath(new URL(`../../deploy/nats/${name}`, import.meta.url));
      assert.match(readFileSync(file, 'utf8'), /^include \.\/auth\.conf$/m, name);
      const check = (env: Record<string, string>) =>
        spawnSync(natsServerBin(), ['-c', file, '-t'], { encoding: 'utf8', env: { PATH: process.env['PATH'], ...env } });
      assert.equal(check(passwords).status, 0, `${name}: ${check(passwords).stderr}`);
      const { NATS_WORKER_PASSWORD: _, ...withoutWorker } = passwords;
      const without = check(withoutWorker);
      assert.notEqual(without.status, 0);
      assert.match(without.stderr, /NATS_WORKER_PASSWORD/);
    }
  });

  it('an api instance and a worker instance, each with its role user, run a turn end to end and delete the session; the ops user lists them (NATS micro)', async (t) => {
    const { options, passwords } = rolesServer({ ops: true });
    const server = await startNatsServer({ ...options, t });
    const roleEnv = (role: Role) => natsServiceEnv(as(server, role, passwords[role]));
    const api = await startTestApp(t, { mode: 'nats', natsUrl: roleEnv('api')['NATS_URL'], env: { ...roleEnv('api'), ROLE: 'api' } });
    const worker = await startTestApp(t, {
      mode: 'nats',
      databaseUrl: api.databaseUrl,
      natsUrl: roleEnv('worker')['NATS_URL'],
      env: { ...roleEnv('worker'), ROLE: 'worker' },
    });

    const { id } = await createSession(api, { capabilities: ['current_time'] });
    const sse = await watch(api, id);
    t.after(() => sse.close());
    assert.equal((await sendMessage(api, id, '@tool get_current_time {}')).status, 201);
    const events = await sse.until('turn.completed');
    assert.equal(events.find((e) => e.type === 'tool.completed')?.data['success'], true, 'the tool ran on the worker');
    assert.ok(events.some((e) => e.type === 'output.message.completed'));
    await sse.until('session.idled');
    assertLogIntegrity(sse.events());
    assert.equal((await getSession(api, id)).status, 'idle');
    // A listing after an id looks the id up in the log (an ordered consumer from its timestamp).
    const since = await api.request('GET', `/v1/sessions/${id}/events?since_id=${events[0]!.id}`);
    assert.equal(since.status, 200, since.text);
    assert.equal(since.body.data[0].id, events[1]!.id);
    // Deletion purges events and the turn queue, deletes the claim record and signals (API user).
    assert.equal((await api.request('DELETE', `/v1/sessions/${id}`)).status, 204);
    assert.equal((await api.request('GET', `/v1/sessions/${id}/events`)).status, 404);

    // The operator's user sees both instances as NATS micro services and reads their status.
    const opsNc = await connect(await natsClientOptions(as(server, 'ops', passwords.ops), { reconnect: false }));
    t.after(() => opsNc.close());
    const pings: ServiceIdentity[] = [];
    for await (const p of await new Svcm(opsNc).client({ strategy: 'stall', maxWait: 1000 }).ping(OPS_SERVICE_NAME))
      pings.push(p as ServiceIdentity);
    assert.deepEqual(pings.map((p) => p.metadata?.['role']).sort(), ['api', 'worker']);
    const status = await opsNc.request(`${OPS_SUBJECT_PREFIX}.${pings[0]!.id}.status`, '', { timeout: 3000 });
    assert.equal(status.json<{ role: string }>().role, pings[0]!.metadata?.['role']);
    assert.match(String(await subscriptionError(opsNc, 'evt.>')), /permissions violation/i, 'the ops user reads no events');

    assert.doesNotMatch(server.log().replace(/.*"evt\.>".*\n?/g, ''), /Violation/, 'no role was refused a subject it uses');
    for (const [role, app] of [
      ['api', api],
      ['worker', worker],
    ] as const) {
      const lines = app.logs.join('');
      assert.match(lines, /"auth":"user_password","tls":true,"msg":"connected to NATS"/);
      assert.doesNotMatch(lines, /"msg":"nats connection"/, `${role}: no connection errors`);
      for (const pw of Object.values(passwords)) {
        assert.ok(!lines.includes(pw) && !lines.includes(encodeURIComponent(pw)), `${role}: no password in the log`);
      }
    }
  });

  it('refuses clients without TLS, without a client certificate, without or with wrong credentials; the service says so without the password', async (t) => {
    const { options, passwords } = rolesServer();
    const server = await startNatsServer({ ...options, t });
    const good = as(server, 'api', passwords.api);
    const attempt = async (o: Parameters<typeof connect>[0]) => {
      const nc = await connect({ ...o, reconnect: false, timeout: 3000 });
      await nc.close();
    };
    const plain = await plaintextLogin(server.port, 'api', passwords.api);
    assert.equal(plain.info['tls_required'], true);
    assert.equal(plain.reply, '', 'a plaintext login is not answered');
    assert.ok(plain.closed, 'and the server hangs up');
    await assert.rejects(
      attempt({ servers: server.address, user: 'api', pass: passwords.api, tls: { caFile: server.pki!.caFile } }),
      // The server's TLS alert, or its reset when the alert loses the race with the close (seen under load).
      /certificate required|ECONNRESET/,
      'TLS without a client certificate',
    );
    await assert.rejects(
      attempt(await natsClientOptions({ url: server.address, auth: server.auth })),
      /Authorization Violation/i,
      'no credentials',
    );
    await assert.rejects(
      attempt(await natsClientOptions(as(server, 'api', 'wrong-password'))),
      /Authorization Violation/i,
      'wrong password',
    );
    await assert.rejects(attempt(await natsClientOptions(as(server, 'nobody', passwords.api))), /Authorization Violation/i, 'unknown user');
    await attempt(await natsClientOptions(good)); // and the right ones get in

    // The service itself, given a wrong password: a start-up failure that names the cause, not the secret.
    const wrong = `wrong:${randomBytes(6).toString('hex')}`;
    const err = await startTestApp(t, {
      mode: 'nats',
      natsUrl: as(server, 'api', wrong).url,
      env: { ...natsServiceEnv(as(server, 'api', wrong)), ROLE: 'api' },
    }).then(
      () => assert.fail('started with a wrong NATS password'),
      (e: Error) => e,
    );
    assert.match(
      err.message,
      new RegExp(`^cannot connect to NATS \\(nats://127\\.0\\.0\\.1:${server.port}\\): Authorization Violation`, 'i'),
    );
    assert.ok(!err.message.includes(wrong) && !err.message.includes(encodeURIComponent(wrong)));
  });

  it('roles get only their subjects: nobody reads evt.>, the worker cannot watch live.>, the api cannot consume the turn queue', async (t) => {
    const { options, passwords } = rolesServer();
    const server = await startNatsServer({ ...options, t });
    // The service user creates the topology and queues a turn, as a running deployment would have.
    const bus = await createBus({ kind: 'nats', ...as(server, 'service', passwords.service), log });
    t.after(() => bus.close());
    const sessionId = newId();
    await bus.turns.enqueue({ session_id: sessionId, turn_id: newId(), job: {} });

    const client = async (role: Role) => {
      const nc = await connect(await natsClientOptions(as(server, role, passwords[role]), { reconnect: false, noAsyncTraces: true }));
      t.after(() => nc.close());
      return nc;
    };
    const apiNc = await client('api');
    const workerNc = await client('worker');
    for (const [nc, subject] of [
      [apiNc, 'evt.>'],
      [workerNc, 'evt.>'],
      [workerNc, 'live.>'],
      [apiNc, '>'],
      [apiNc, '$JS.ACK.>'],
    ] as const) {
      const err = await subscriptionError(nc, subject);
      assert.match(String(err), /permissions violation/i, `subscribing to ${subject} is refused`);
    }
    // What the roles use stays open.
    assert.equal(await subscriptionError(apiNc, `live.0.${sessionId}`, 300), null);
    // A shard's wildcard (live-subscriptions.ts) lies within the same live.*.* grant.
    assert.equal(await subscriptionError(apiNc, 'live.0.*', 300), null);
    assert.equal(await subscriptionError(workerNc, `ctl.${sessionId}.*`, 300), null);

    // The api user cannot look up or pull from the workers consumer, nor ack for it.
    const apiJs = jetstream(apiNc, { timeout: 1500 });
    await assert.rejects(apiJs.consumers.get('TURNS', 'workers'), 'the api user cannot open the workers consumer');
    await assert.rejects(
      apiNc.request('$JS.API.CONSUMER.MSG.NEXT.TURNS.workers', JSON.stringify({ batch: 1, expires: 500_000_000 }), { timeout: 1500 }),
    );
    const refused = /Publish Violation.*"?\$JS\.API\.CONSUMER\.(INFO|MSG\.NEXT)\.TURNS\.workers/;
    assert.match(await logOnceItShows(server, refused), refused);
    // Nor delete streams (only named API calls are allowed, no $JS.API.>).
    const apiJsm = await jetstreamManager(apiNc, { timeout: 1500 });
    await assert.rejects(apiJsm.streams.delete('TURNS'));
    // The turn is still there for a worker, which can claim it.
    assert.notEqual(await bus.turns.queued(sessionId), null);
    const workerBus = await createBus({ kind: 'nats', ...as(server, 'worker', passwords.worker), log });
    t.after(() => workerBus.close());
    const claim = await workerBus.turns.claim('w1', { waitMs: 3000 });
    assert.equal(claim?.turn.session_id, sessionId);
    await claim.ack();
    assert.equal(await bus.turns.queued(sessionId), null);
  });

  it('a token in NATS_URL, and an nkey seed in NATS_NKEY_SEED (the seed or a file holding it)', async (t) => {
    const token = randomBytes(12).toString('hex');
    const tokenServer = await startNatsServer({ t, secure: false, config: `authorization { token: "${token}" }` });
    const tokenUrl = `nats://${token}@127.0.0.1:${tokenServer.port}`;
    await assert.rejects(createBus({ kind: 'nats', url: tokenServer.address, log }), /Authorization Violation/i);
    const byToken = await createBus({ kind: 'nats', url: tokenUrl, log });
    t.after(() => byToken.close());
    const sid = newId();
    assert.ok((await byToken.events.append(sid, [{ type: 'a' }])).ok);

    const user = nkeys.createUser();
    const seed = new TextDecoder().decode(user.getSeed());
    const nkeyServer = await startNatsServer({ t, secure: false, config: `authorization { users: [ { nkey: ${user.getPublicKey()} } ] }` });
    await assert.rejects(
      createBus({ kind: 'nats', url: nkeyServer.url, log, auth: { nkeySeed: new TextDecoder().decode(nkeys.createUser().getSeed()) } }),
      /Authorization Violation/i,
    );
    const bySeed = await createBus({ kind: 'nats', url: nkeyServer.url, log, auth: { nkeySeed: seed } });
    t.after(() => bySeed.close());
    assert.ok((await bySeed.events.append(sid, [{ type: 'a' }])).ok);
    const seedFile = `${nkeyServer.storeDir}.seed`;
    writeFileSync(seedFile, `${seed}\n`, { mode: 0o600 });
    const byFile = await createBus({ kind: 'nats', url: nkeyServer.url, log, auth: { nkeySeed: seedFile } });
    t.after(() => byFile.close());
    assert.deepEqual(
      (await byFile.events.read(sid)).map((e) => e.type),
      ['a'],
    );
  });

  it('a .creds file in NATS_CREDS (operator mode: user JWT signed by the account, nkey seed)', async (t) => {
    const operator = createTestOperator();
    const server = await startNatsServer({ t, secure: false, config: operator.serverConfig });
    const creds = (name: string, text: string) => {
      const path = `${server.storeDir}.${name}.creds`;
      writeFileSync(path, text, { mode: 0o600 });
      return path;
    };
    const stranger = creds('stranger', createTestOperator().userCreds());
    await assert.rejects(
      createBus({ kind: 'nats', url: server.url, log, auth: { credsFile: stranger } }),
      /Authorization Violation/i,
      'a user of another operator',
    );
    await assert.rejects(createBus({ kind: 'nats', url: server.url, log }), /Authorization Violation/i, 'no creds');
    const bus = await createBus({ kind: 'nats', url: server.url, log, auth: { credsFile: creds('user', operator.userCreds()) } });
    t.after(() => bus.close());
    const sid = newId();
    assert.ok((await bus.events.append(sid, [{ type: 'a' }])).ok);
    await bus.turns.enqueue({ session_id: sid, turn_id: newId(), job: {} });
    const claim = await bus.turns.claim('w1', { waitMs: 3000 });
    assert.equal(claim?.turn.session_id, sid);
    await claim.ack();
  });
});
