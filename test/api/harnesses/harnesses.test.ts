import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { uuidv7 } from 'uuidv7';
import {
  BUILT_IN_HARNESSES,
  GENERIC_HARNESS_ID,
  PLATFORM_CHAT_HARNESS_ID,
  createHarnessService,
} from '../../../src/api/harnesses/index.js';
import { createCapabilityRegistry, validateCapabilityRefs } from '../../../src/capabilities/index.js';
import { startTestApp } from '../../helpers/app.js';
import { addCaller, addModel, adminOrgId, useSuiteApp } from '../agents/helpers.js';

const harnessBody = (extra: Record<string, unknown> = {}) => ({ name: 'research', system_prompt: 'You research.', ...extra });

describe('harnesses', () => {
  const app = useSuiteApp('postgres');

  it('built-in generic and platform-chat are listed for every organisation, with their well-known ids', async () => {
    const member = await addCaller(app());
    const r = await member.request('GET', '/v1/harnesses');
    assert.equal(r.status, 200);
    assert.equal(r.body.total, r.body.data.length);
    const builtIns = r.body.data.filter((h: { is_built_in: boolean }) => h.is_built_in);
    assert.deepEqual(
      builtIns.map((h: { id: string; name: string }) => [h.id, h.name]),
      [
        [GENERIC_HARNESS_ID, 'generic'],
        [PLATFORM_CHAT_HARNESS_ID, 'platform-chat'],
      ],
    );
    for (const h of builtIns) {
      assert.equal(h.status, 'active');
      assert.deepEqual(Object.keys(h).sort(), [
        'capabilities',
        'created_at',
        'default_model_id',
        'description',
        'id',
        'is_built_in',
        'max_iterations',
        'name',
        'status',
        'system_prompt',
        'updated_at',
      ]);
    }
    const one = await member.request('GET', `/v1/harnesses/${PLATFORM_CHAT_HARNESS_ID}`);
    assert.equal(one.status, 200);
    assert.equal(one.body.name, 'platform-chat');
  });

  it('the built-in definitions reference only registered capabilities', () => {
    const registry = createCapabilityRegistry();
    for (const h of BUILT_IN_HARNESSES) validateCapabilityRefs(h.capabilities, registry);
  });

  it('admin POST - 201, an organisation harness; members get 403', async () => {
    const r = await app().request('POST', '/v1/harnesses', {
      body: harnessBody({ description: 'Deep research', capabilities: ['web_fetch', { ref: 'current_time' }], max_iterations: 50 }),
    });
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.is_built_in, false);
    assert.equal(r.body.status, 'active');
    assert.equal(r.body.max_iterations, 50);
    assert.deepEqual(r.body.capabilities, ['web_fetch', { ref: 'current_time' }]);
    assert.deepEqual((await app().request('GET', `/v1/harnesses/${r.body.id}`)).body, r.body);
    const member = await addCaller(app(), { role: 'member', orgId: await adminOrgId(app()) });
    assert.equal((await member.request('POST', '/v1/harnesses', { body: harnessBody() })).status, 403);
    assert.equal((await member.request('PATCH', `/v1/harnesses/${r.body.id}`, { body: { name: 'x' } })).status, 403);
    assert.equal((await member.request('DELETE', `/v1/harnesses/${r.body.id}`)).status, 403);
    assert.equal((await member.request('GET', `/v1/harnesses/${r.body.id}`)).status, 200);
  });

  it('POST - 400 for bad input or size limits, 422 for an unknown capability', async () => {
    assert.equal((await app().request('POST', '/v1/harnesses', { body: { name: 'x' } })).status, 400);
    assert.equal((await app().request('POST', '/v1/harnesses', { body: harnessBody({ extra: 1 }) })).status, 400);
    const limited = await app().request('POST', '/v1/harnesses', { body: harnessBody({ name: 'é'.repeat(1024) + 'a' }) });
    assert.deepEqual(limited.body, { error: 'Input exceeds allowed limits', status: 400 });
    assert.equal((await app().request('POST', '/v1/harnesses', { body: harnessBody({ name: 'é'.repeat(1024) }) })).status, 201);
    assert.equal((await app().request('POST', '/v1/harnesses', { body: harnessBody({ capabilities: ['teleport'] }) })).status, 422);
    assert.equal(
      (
        await app().request('POST', '/v1/harnesses', {
          body: harnessBody({ capabilities: [{ ref: 'web_fetch', config: { timeout_ms: 'x' } }] }),
        })
      ).status,
      422,
    );
  });

  it('custom harnesses are visible to their organisation only (403 for others, absent from their list)', async () => {
    const mine = (await app().request('POST', '/v1/harnesses', { body: harnessBody({ name: 'private' }) })).body;
    const other = await addCaller(app(), { role: 'admin' });
    assert.equal((await other.request('GET', `/v1/harnesses/${mine.id}`)).status, 403);
    assert.equal((await other.request('PATCH', `/v1/harnesses/${mine.id}`, { body: { name: 'x' } })).status, 403);
    assert.equal((await other.request('DELETE', `/v1/harnesses/${mine.id}`)).status, 403);
    const list = await other.request('GET', '/v1/harnesses?include_archived=true');
    assert.ok(!list.body.data.some((h: { id: string }) => h.id === mine.id));
    assert.equal((await other.request('GET', `/v1/harnesses/${uuidv7()}`)).status, 404);
  });

  it('PATCH - only the given fields; capabilities replaces; null default_model_id removes; status never changes', async () => {
    const model = await addModel(app(), await adminOrgId(app()));
    assert.equal((await app().request('POST', '/v1/harnesses', { body: harnessBody({ default_model_id: randomUUID() }) })).status, 404);
    const h = (
      await app().request('POST', '/v1/harnesses', {
        body: harnessBody({ description: 'd', capabilities: ['current_time'], default_model_id: model }),
      })
    ).body;
    const r = await app().request('PATCH', `/v1/harnesses/${h.id}`, {
      body: { system_prompt: 'New', capabilities: ['stateless_todo_list'] },
    });
    assert.equal(r.status, 200);
    assert.equal(r.body.system_prompt, 'New');
    assert.deepEqual(r.body.capabilities, ['stateless_todo_list']);
    assert.equal(r.body.description, 'd');
    assert.equal(r.body.default_model_id, model);
    assert.equal((await app().request('PATCH', `/v1/harnesses/${h.id}`, { body: { default_model_id: randomUUID() } })).status, 404);
    const cleared = await app().request('PATCH', `/v1/harnesses/${h.id}`, { body: { default_model_id: null } });
    assert.equal(cleared.body.default_model_id, null);
    const echoed = await app().request('PATCH', `/v1/harnesses/${h.id}`, { body: { status: 'archived', name: 'renamed' } });
    assert.equal(echoed.status, 200);
    assert.equal(echoed.body.status, 'active');
    assert.equal(echoed.body.name, 'renamed');
    assert.equal((await app().request('PATCH', `/v1/harnesses/${h.id}`, { body: { capabilities: ['teleport'] } })).status, 422);
    assert.equal((await app().request('PATCH', `/v1/harnesses/${uuidv7()}`, { body: { name: 'x' } })).status, 404);
  });

  it('built-in harnesses are read-only: PATCH and DELETE are 403', async () => {
    assert.equal((await app().request('PATCH', `/v1/harnesses/${GENERIC_HARNESS_ID}`, { body: { name: 'mine' } })).status, 403);
    assert.equal((await app().request('DELETE', `/v1/harnesses/${GENERIC_HARNESS_ID}`)).status, 403);
    assert.equal((await app().request('GET', `/v1/harnesses/${GENERIC_HARNESS_ID}`)).body.name, 'generic');
  });

  it('DELETE - archives (204); still readable; listed only with include_archived=true', async () => {
    const h = (await app().request('POST', '/v1/harnesses', { body: harnessBody({ name: 'old' }) })).body;
    assert.equal((await app().request('DELETE', `/v1/harnesses/${h.id}`)).status, 204);
    const read = await app().request('GET', `/v1/harnesses/${h.id}`);
    assert.equal(read.body.status, 'archived');
    assert.ok(!(await app().request('GET', '/v1/harnesses')).body.data.some((x: { id: string }) => x.id === h.id));
    assert.ok((await app().request('GET', '/v1/harnesses?include_archived=true')).body.data.some((x: { id: string }) => x.id === h.id));
    assert.equal((await app().request('DELETE', `/v1/harnesses/${h.id}`)).status, 204);
  });

  it('harnesses.getHarness / getActiveHarness - 404 unknown, 403 another org, 422 archived', async () => {
    const harnesses = app().app.modules.harnesses.service;
    const orgId = await adminOrgId(app());
    assert.equal((await harnesses.getActiveHarness(orgId, GENERIC_HARNESS_ID)).name, 'generic');
    assert.equal((await harnesses.getHarness(randomUUID(), PLATFORM_CHAT_HARNESS_ID)).name, 'platform-chat');
    await assert.rejects(harnesses.getHarness(orgId, uuidv7()), { status: 404 });
    const h = (await app().request('POST', '/v1/harnesses', { body: harnessBody() })).body;
    await assert.rejects(harnesses.getHarness(randomUUID(), h.id), { status: 403 });
    await app().request('DELETE', `/v1/harnesses/${h.id}`);
    assert.equal((await harnesses.getHarness(orgId, h.id)).status, 'archived');
    await assert.rejects(harnesses.getActiveHarness(orgId, h.id), { status: 422, message: 'Harness is archived' });
  });

  it('built-in rows for new sessions: sessions created at the same moment share one read', async () => {
    const { store } = app().app.services;
    let reads = 0;
    // The real store; only its unit-of-work forks are counted (each read of a row takes one).
    const counted = { ...store, em: () => (reads++, store.em()) };
    const harnesses = createHarnessService({ store: counted, capabilities: createCapabilityRegistry() });
    const orgId = await adminOrgId(app());
    const views = await Promise.all(Array.from({ length: 20 }, () => harnesses.getActiveHarness(orgId, GENERIC_HARNESS_ID)));
    assert.ok(views.every((v) => v.name === 'generic'));
    assert.equal(reads, 1, 'one read for all twenty');
  });

  it('seeding is idempotent and restores a tampered built-in row', async () => {
    const { store } = app().app.services;
    const harnesses = app().app.modules.harnesses.service;
    const before = await store.sql<{ id: string; updated_at: Date }>(
      'select id, updated_at from harnesses where organization_id is null order by id',
    );
    await harnesses.ensureBuiltIns();
    const after = await store.sql<{ id: string; updated_at: Date }>(
      'select id, updated_at from harnesses where organization_id is null order by id',
    );
    assert.deepEqual(after, before);
    await store.sql('update harnesses set name = ? where id = ?', ['hacked', GENERIC_HARNESS_ID]);
    await harnesses.ensureBuiltIns();
    assert.equal((await app().request('GET', `/v1/harnesses/${GENERIC_HARNESS_ID}`)).body.name, 'generic');
  });

  it('a second instance on the same database starts cleanly and sees the same two built-ins', async (t) => {
    const second = await startTestApp(t, { mode: 'postgres', databaseUrl: app().databaseUrl });
    const r = await second.request('GET', '/v1/harnesses');
    assert.equal(r.body.data.filter((h: { is_built_in: boolean }) => h.is_built_in).length, 2);
  });
});
