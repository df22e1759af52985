import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestApp } from '../../helpers/app.js';
import { openSse } from '../../helpers/sse-client.js';
import { exampleEvents, isStored, newSession } from './helpers.js';
import { rawLog } from '../../helpers/raw-log.js';

describe('GET /v1/sessions/:id/sse', () => {
  it('starts with `connected`, then frames whose event equals the JSON type, with ids, live and replayed', async (t) => {
    const app = await startTestApp(t);
    const sid = await newSession(app);
    const sse = await openSse(`${app.url}/v1/sessions/${sid}/sse`, { key: app.adminKey });
    t.after(() => sse.close());
    assert.equal(sse.status, 200);
    await sse.waitFor((e) => e.event === 'session.created');
    await rawLog(app.app.services.bus.events).append(sid, [{ type: 'session.started' }, { type: 'turn.started', data: { turn_id: 'x' } }]);
    await sse.waitFor(isStored, 3);
    assert.equal(sse.events[0]!.event, 'connected');
    assert.deepEqual(JSON.parse(sse.events[0]!.data), { status: 'connected' });
    for (const e of sse.events.filter(isStored)) {
      const body = JSON.parse(e.data);
      assert.equal(body.type, e.event);
      assert.equal(body.id, e.id);
      assert.equal(body.session_id, sid);
    }
    assert.deepEqual(
      sse.events.filter(isStored).map((e) => JSON.parse(e.data).sequence),
      [1, 2, 3],
    );
    assert.ok(sse.retries.includes(100));
  });

  it('resumes strictly after since_id and after Last-Event-ID; an unknown since_id is 400', async (t) => {
    const app = await startTestApp(t);
    const sid = await newSession(app);
    const appended = await rawLog(app.app.services.bus.events).append(sid, [
      { type: 'session.started' },
      { type: 'session.activated' },
      { type: 'session.idled' },
    ]);
    assert.ok(appended.ok);
    const second = appended.events[0]!;
    const a = await openSse(`${app.url}/v1/sessions/${sid}/sse?since_id=${second.id}`, { key: app.adminKey });
    t.after(() => a.close());
    const got = await a.waitFor(isStored, 2);
    assert.deepEqual(
      got.map((e) => e.event),
      ['session.activated', 'session.idled'],
    );
    const b = await openSse(`${app.url}/v1/sessions/${sid}/sse`, {
      key: app.adminKey,
      headers: { 'last-event-id': appended.events[1]!.id },
    });
    t.after(() => b.close());
    assert.deepEqual(
      (await b.waitFor(isStored, 1)).map((e) => e.event),
      ['session.idled'],
    );
    const bad = await openSse(`${app.url}/v1/sessions/${sid}/sse?since_id=0190e0a0-0000-7000-8000-000000000000`, { key: app.adminKey });
    assert.equal(bad.status, 400);
  });

  it('applies types first, then exclude; validates filter values before the stream starts', async (t) => {
    const app = await startTestApp(t);
    const sid = await newSession(app);
    await rawLog(app.app.services.bus.events).append(
      sid,
      exampleEvents('turn.started', 'output.message.delta', 'turn.completed', 'session.idled'),
    );
    const url = `${app.url}/v1/sessions/${sid}/sse?types=turn.started&types=turn.completed&types=session.idled&exclude=session.idled`;
    const s = await openSse(url, { key: app.adminKey });
    t.after(() => s.close());
    await s.waitFor(isStored, 2);
    await sleep(100);
    assert.deepEqual(
      s.events.filter(isStored).map((e) => e.event),
      ['turn.started', 'turn.completed'],
    );
    const unknown = await openSse(`${app.url}/v1/sessions/${sid}/sse?types=not.a.type`, { key: app.adminKey });
    assert.equal(unknown.status, 400);
    const many = '&types=turn.started'.repeat(26).slice(1);
    assert.equal((await openSse(`${app.url}/v1/sessions/${sid}/sse?${many}`, { key: app.adminKey })).status, 400);
    const listing = await app.request('GET', `/v1/sessions/${sid}/events?types=turn.started&types=session.idled&exclude=session.idled`);
    assert.deepEqual(
      listing.body.data.map((e: { type: string }) => e.type),
      ['turn.started'],
    );
  });

  it('sends heartbeats at SSE_HEARTBEAT_MS and cycles with `disconnecting` at SSE_CYCLE_MS ±20%', async (t) => {
    const app = await startTestApp(t, { env: { SSE_HEARTBEAT_MS: 100, SSE_CYCLE_MS: 1000 } });
    const sid = await newSession(app);
    const started = Date.now();
    const s = await openSse(`${app.url}/v1/sessions/${sid}/sse`, { key: app.adminKey });
    await s.done;
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 780 && elapsed <= 1400, `cycled after ${elapsed} ms`);
    const last = s.events.at(-1)!;
    assert.equal(last.event, 'disconnecting');
    assert.deepEqual(JSON.parse(last.data), { reason: 'connection_cycle', retry_ms: 100 });
    assert.ok(s.comments.filter((c) => c.text === 'heartbeat').length >= 5, `heartbeats: ${s.comments.length}`);
    assert.ok(s.retries.includes(500), 'idle backoff reaches 500');
    assert.equal(s.retries.at(-1), 100, 'retry 100 after disconnecting');
  });

  it('401 without credentials, 403 for another organisation, stream tokens and ?access_token only here', async (t) => {
    const app = await startTestApp(t);
    const sid = await newSession(app);
    assert.equal((await openSse(`${app.url}/v1/sessions/${sid}/sse`)).status, 401);
    const viaQuery = await openSse(`${app.url}/v1/sessions/${sid}/sse?access_token=${app.adminKey}`);
    t.after(() => viaQuery.close());
    assert.equal(viaQuery.status, 200);
    assert.ok(!app.logs.some((l) => l.includes(app.adminKey)), 'the query token never reaches the logs');
    const org = await app.request('POST', '/v1/orgs', {
      body: { name: 'Other', admin: { email: 'o@example.com', name: 'O', password: 'correct horse battery 9' } },
    });
    assert.equal(org.status, 201, org.text);
    const login = await app.request('POST', '/v1/auth/login', {
      key: null,
      body: { email: 'o@example.com', password: 'correct horse battery 9' },
    });
    assert.equal(login.status, 200, login.text);
    const other = await openSse(`${app.url}/v1/sessions/${sid}/sse`, { key: login.body.access_token });
    assert.equal(other.status, 403);
    assert.deepEqual(other.errorBody, { error: 'Forbidden', status: 403 });
    // The same ownership check guards the polling listing and the derived messages.
    const missing = '01900000-0000-7000-8000-000000000000';
    for (const path of [`/v1/sessions/${sid}/events`, `/v1/sessions/${sid}/messages`]) {
      const r = await app.request('GET', path, { key: login.body.access_token });
      assert.deepEqual([r.status, r.body], [403, { error: 'Forbidden', status: 403 }], path);
      const own = await app.request('GET', path);
      assert.equal(own.status, 200, path);
      const gone = await app.request('GET', path.replace(sid, missing));
      assert.deepEqual([gone.status, gone.body], [404, { error: 'Not found', status: 404 }], path);
    }
    assert.equal((await openSse(`${app.url}/v1/sessions/${missing}/sse`, { key: app.adminKey })).status, 404);
  });

  it('deleting the session ends its open streams', async (t) => {
    const app = await startTestApp(t);
    const sid = await newSession(app);
    const s = await openSse(`${app.url}/v1/sessions/${sid}/sse`, { key: app.adminKey });
    await s.waitFor((e) => e.event === 'session.created');
    assert.equal((await app.request('DELETE', `/v1/sessions/${sid}`)).status, 204);
    await Promise.race([s.done, sleep(5000).then(() => assert.fail('stream still open'))]);
  });

  it('refuses streams past the per-session limit with 429', async (t) => {
    const app = await startTestApp(t, { env: { SSE_MAX_PER_SESSION: 2 } });
    const sid = await newSession(app);
    const a = await openSse(`${app.url}/v1/sessions/${sid}/sse`, { key: app.adminKey });
    const b = await openSse(`${app.url}/v1/sessions/${sid}/sse`, { key: app.adminKey });
    t.after(() => {
      a.close();
      b.close();
    });
    const c = await openSse(`${app.url}/v1/sessions/${sid}/sse`, { key: app.adminKey });
    assert.equal(c.status, 429);
    a.close();
    await sleep(200);
    const d = await openSse(`${app.url}/v1/sessions/${sid}/sse`, { key: app.adminKey });
    t.after(() => d.close());
    assert.equal(d.status, 200, 'a closed stream gives its slot back');
  });
});
