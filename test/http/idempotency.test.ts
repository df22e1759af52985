import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { createIdempotencyKeys, createProcessLiveness, type IdempotencyKeysOptions } from '../../src/db/index.js';
import { sharedTestApp, type TestApp, type TestMode } from '../helpers/app.js';
import { request } from '../helpers/http.js';
import { createOrgWithAdmin } from '../api/auth/helpers.js';
import { listEvents, waitForEvent } from '../turns/helpers.js';

/** Issue 13 item 8: `Idempotency-Key` makes retries of the creating POSTs safe. */
const post = (app: TestApp | string, path: string, body: unknown, key: string | undefined, credential?: string) =>
  request(typeof app === 'string' ? app : app.url, 'POST', path, {
    key: credential ?? (typeof app === 'string' ? undefined : app.adminKey),
    body,
    headers: key === undefined ? {} : { 'Idempotency-Key': key },
  });

async function agentCount(app: TestApp, name: string): Promise<number> {
  const r = await app.request('GET', '/v1/agents?limit=100');
  return (r.body.data as { name: string }[]).filter((a) => a.name === name).length;
}

/** A key store of its own (a process of its own: its own liveness row), closed after the test. */
function keyStore(app: TestApp, t: { after(fn: () => unknown): void }, opts: Partial<IdempotencyKeysOptions> = {}, beatMs = 200) {
  const deps = { store: app.app.services.store, log: app.app.log };
  const liveness = createProcessLiveness(deps, { instanceId: 'test-keys', beatMs, deadAfterMs: 1_000 });
  const keys = createIdempotencyKeys({ ...deps, liveness }, opts);
  t.after(async () => {
    keys.close();
    await liveness.close();
  });
  return { keys, liveness };
}

function suite(mode: TestMode) {
  describe(`Idempotency-Key (${mode})`, () => {
    const shared = sharedTestApp({ mode });
    const second = mode === 'postgres' ? sharedTestApp(() => ({ mode, databaseUrl: shared().databaseUrl! })) : null;
    it('POST /v1/agents - a repeat returns the first outcome; another body with the key is 422; nothing is created twice', async () => {
      const app = shared();
      const key = randomUUID();
      const body = { name: `idem-${key.slice(0, 8)}`, system_prompt: 'You help.' };
      const first = await post(app, '/v1/agents', body, key);
      assert.equal(first.status, 201, first.text);
      const again = await post(app, '/v1/agents', body, key);
      assert.equal(again.status, 201);
      assert.deepEqual(again.body, first.body);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.equal(first.headers.get('idempotent-replayed'), null);
      assert.equal(await agentCount(app, body.name), 1);
      const other = await post(app, '/v1/agents', { ...body, system_prompt: 'Other.' }, key);
      assert.equal(other.status, 422);
      assert.match(other.body.error, /Idempotency-Key/);
      assert.equal(other.body.status, 422);
      // Without a key every POST runs.
      assert.equal((await post(app, '/v1/agents', body, undefined)).status, 201);
      assert.equal(await agentCount(app, body.name), 2);
    });

    it('POST …/messages - a retried message starts one turn and gets the same 201 body; POST /v1/sessions too', async () => {
      const app = shared();
      const agent = await post(app, '/v1/agents', { name: `idem-m-${randomUUID().slice(0, 8)}`, system_prompt: 'Echo.' }, undefined);
      const sessionKey = randomUUID();
      const s1 = await post(app, '/v1/sessions', { agent_id: agent.body.id }, sessionKey);
      const s2 = await post(app, '/v1/sessions', { agent_id: agent.body.id }, sessionKey);
      assert.equal(s1.status, 201, s1.text);
      assert.deepEqual([s2.status, s2.body.id], [201, s1.body.id]);
      const path = `/v1/sessions/${s1.body.id}/messages`;
      const msg = { message: { content: [{ type: 'text', text: 'hello\n@sleep 1500' }] } };
      const key = randomUUID();
      const m1 = await post(app, path, msg, key);
      assert.equal(m1.status, 201, m1.text);
      const m2 = await post(app, path, msg, key); // the turn still runs: without the key this is 409 busy
      assert.equal(m2.status, 201, m2.text);
      assert.deepEqual(m2.body, m1.body);
      // The turn's worker writes its first events (the job carries them): read once it began.
      await waitForEvent(app, s1.body.id, 'turn.started');
      const inputs = (await listEvents(app, s1.body.id)).filter((e) => e.type === 'input.message');
      assert.equal(inputs.length, 1, 'one message stored');
      // A busy 409 is not kept: a retry with its key after the turn ended runs.
      const busyKey = randomUUID();
      const second = { message: { content: [{ type: 'text', text: 'second' }] } };
      assert.equal((await post(app, path, second, busyKey)).status, 409);
      await waitForEvent(app, s1.body.id, 'session.idled');
      const retried = await post(app, path, second, busyKey);
      assert.equal(retried.status, 201, retried.text);
      assert.equal(retried.headers.get('idempotent-replayed'), null);
    });

    it('keys are per organisation; a key that is too long or not visible ASCII is 400', async () => {
      const app = shared();
      const other = await createOrgWithAdmin(app, `Idem${randomUUID().slice(0, 6)}`);
      const key = randomUUID();
      const a = await post(app, '/v1/agents', { name: 'same-name', system_prompt: 'A' }, key);
      const b = await post(app.url, '/v1/agents', { name: 'same-name', system_prompt: 'B' }, key, other.key);
      assert.equal(a.status, 201, a.text);
      assert.equal(b.status, 201, b.text);
      assert.notEqual(b.body.id, a.body.id);
      assert.equal(b.headers.get('idempotent-replayed'), null);
      assert.equal((await post(app, '/v1/agents', { name: 'x', system_prompt: 'x' }, 'k'.repeat(256))).status, 400);
      const bad = await post(app, '/v1/agents', { name: 'x', system_prompt: 'x' }, 'has space');
      assert.deepEqual([bad.status, bad.body.status], [400, 400]);
      assert.match(bad.body.error, /Idempotency-Key/);
    });

    it('concurrent duplicates: one request runs; the others replay it or get 409 with Retry-After', async () => {
      const app = shared();
      const key = randomUUID();
      const body = { name: `idem-c-${key.slice(0, 8)}`, system_prompt: 'Concurrent.' };
      const all = await Promise.all(Array.from({ length: 6 }, () => post(app, '/v1/agents', body, key)));
      const created = all.filter((r) => r.status === 201);
      assert.ok(created.length >= 1);
      for (const r of created) assert.equal(r.body.id, created[0]!.body.id);
      for (const r of all.filter((r) => r.status !== 201)) {
        assert.equal(r.status, 409, r.text);
        assert.equal(r.headers.get('retry-after'), '1');
        assert.match(r.body.error, /in progress/);
      }
      assert.equal(await agentCount(app, body.name), 1);
    });

    it('expired keys are purged and then run again', async (t) => {
      const app = shared();
      const orgId = (await app.request('GET', '/v1/orgs')).body.data[0].id as string;
      const { keys } = keyStore(app, t, { ttlMs: 2_000 });
      const first = await keys.begin(orgId, 'purge-me', 'fp');
      assert.equal(first.kind, 'new');
      await keys.complete(orgId, 'purge-me', (first as { claim: string }).claim, { status: 201, body: { ok: 1 } });
      assert.equal((await keys.begin(orgId, 'purge-me', 'fp')).kind, 'replay');
      await new Promise((r) => setTimeout(r, 2_100));
      assert.ok((await keys.purgeExpired()) >= 1);
      const rows = await app.app.services.store.sql(`select 1 from idempotency_keys where organization_id = ? and key = ?`, [
        orgId,
        'purge-me',
      ]);
      assert.equal(rows.length, 0);
      assert.equal((await keys.begin(orgId, 'purge-me', 'other')).kind, 'new', 'an expired key is free for any request');
    });

    it('a reservation survives a 5xx and a stale claim: the next request with the key gets it; a lost claim cannot reserve', async (t) => {
      const app = shared();
      const orgId = (await app.request('GET', '/v1/orgs')).body.data[0].id as string;
      const { keys } = keyStore(app, t, { staleInFlightMs: 60_000 });
      const key = randomUUID();
      const first = await keys.begin(orgId, key, 'fp');
      assert.equal(first.kind, 'new');
      const claim = (first as { claim: string }).claim;
      await keys.reserve(orgId, key, claim, { ids: [1, 2] });
      assert.equal((await keys.begin(orgId, key, 'fp')).kind, 'in_flight', 'a live claim with a reservation is still in flight');
      await keys.abandon(orgId, key, claim); // the request answered 5xx
      const retry = await keys.begin(orgId, key, 'fp');
      assert.equal(retry.kind, 'new', 'taken over at once');
      assert.deepEqual((retry as { reservation?: unknown }).reservation, { ids: [1, 2] });
      await assert.rejects(keys.reserve(orgId, key, claim, { ids: [3] }), (e: Error) => e.name === 'IdempotencyKeyInUseError');
      const other = await keys.begin(orgId, randomUUID(), 'fp');
      assert.equal((other as { reservation?: unknown }).reservation, undefined, 'a fresh key has none');
    });

    it('an in-flight key is taken over once its process is dead, however young, and never while it is alive', async (t) => {
      const app = shared();
      const orgId = (await app.request('GET', '/v1/orgs')).body.data[0].id as string;
      // Its heartbeat is written by hand below (no timer beats): the test plays its life and death.
      const first = keyStore(app, t, { staleInFlightMs: 60_000 }, 3_600_000);
      const beatAgo = (ms: number) =>
        app.app.services.store.sql(`update process_liveness set beat_at = now() - ? * interval '1 millisecond' where process_id = ?`, [
          ms,
          first.liveness.processId,
        ]);
      const other = keyStore(app, t, { staleInFlightMs: 60_000 });
      const key = randomUUID();
      const begun = await first.keys.begin(orgId, key, 'fp');
      assert.equal(begun.kind, 'new');
      await first.keys.reserve(orgId, key, (begun as { claim: string }).claim, { ids: [7] });
      // Alive, and its request older than the stale limit: still in flight (it may be running).
      await app.app.services.store.sql(`update idempotency_keys set created_at = now() - interval '1 hour' where key = ?`, [key]);
      await beatAgo(0);
      assert.equal((await other.keys.begin(orgId, key, 'fp')).kind, 'in_flight', 'a live owner keeps its key');
      // Killed: its heartbeat stops (the row stays, as after SIGKILL) and goes stale.
      await beatAgo(2_000);
      await app.app.services.store.sql(`update idempotency_keys set created_at = now() where key = ?`, [key]);
      const retry = await other.keys.begin(orgId, key, 'fp');
      assert.equal(retry.kind, 'new', 'taken over as soon as its process is dead');
      assert.deepEqual((retry as { reservation?: unknown }).reservation, { ids: [7] }, 'with the ids the dead request reserved');
    });

    if (second) {
      it('a retry sent to another instance gets the first outcome', async () => {
        const [a, b] = [shared(), second()];
        const key = randomUUID();
        const body = { name: `idem-x-${key.slice(0, 8)}`, system_prompt: 'Across.' };
        const first = await post(a, '/v1/agents', body, key);
        const again = await post(b, '/v1/agents', body, key);
        assert.equal(first.status, 201);
        assert.deepEqual([again.status, again.body], [201, first.body]);
        assert.equal(await agentCount(b, body.name), 1);
      });
    } else {
      it('the OpenAPI document lists the header on the four routes', async () => {
        const doc = (await request(shared().url, 'GET', '/api-doc/openapi.json')).body;
        for (const path of ['/v1/agents', '/v1/sessions', '/v1/sessions/{id}/messages', '/v1/sessions/{id}/tool-results']) {
          const params = (doc.paths[path].post.parameters ?? []) as { name: string; in: string }[];
          assert.ok(
            params.some((p) => p.name === 'Idempotency-Key' && p.in === 'header'),
            path,
          );
        }
        assert.equal(
          (doc.paths['/v1/sessions'].get.parameters ?? []).some((p: { name: string }) => p.name === 'Idempotency-Key'),
          false,
        );
      });
    }
  });
}

suite('pglite');
suite('postgres');
