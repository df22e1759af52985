import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { uuidv7 } from 'uuidv7';
import type { TestMode } from '../../helpers/app.js';
import { request } from '../../helpers/http.js';
import { addCaller, addModel, adminOrgId, agentBody, useSuiteApp } from './helpers.js';

/** The agent CRUD rules of spec 3.1 and 4.1 through real HTTP; run once per store mode. */
function agentCrudSuite(mode: TestMode) {
  describe(`agents CRUD (${mode})`, () => {
    const app = useSuiteApp(mode);
    const create = async (extra: Record<string, unknown> = {}) => {
      const r = await app().request('POST', '/v1/agents', { body: agentBody(extra) });
      assert.equal(r.status, 201, r.text);
      return r.body;
    };

    it('POST /v1/agents - 201 with a server UUIDv7, defaults and status active', async () => {
      const r = await app().request('POST', '/v1/agents', { body: agentBody({ description: 'Helps', tags: ['support'] }) });
      assert.equal(r.status, 201);
      assert.match(r.body.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      assert.deepEqual(
        { ...r.body, id: undefined, created_at: undefined, updated_at: undefined },
        {
          id: undefined,
          name: 'Support',
          description: 'Helps',
          system_prompt: 'You help customers.',
          default_model_id: null,
          tags: ['support'],
          capabilities: [],
          client_tools: [],
          max_iterations: null,
          display_name: null,
          model: null,
          parallel_tool_calls: null,
          tool_approvals: [],
          compaction: null,
          harness_id: '00000000-0000-4000-8000-000000000001',
          status: 'active',
          created_at: undefined,
          updated_at: undefined,
        },
      );
      assert.ok(!Number.isNaN(Date.parse(r.body.created_at)));
      assert.deepEqual((await app().request('GET', `/v1/agents/${r.body.id}`)).body, r.body);
    });

    it('POST /v1/agents - keeps a client id that is a UUID v4 or v7', async () => {
      for (const id of [randomUUID(), uuidv7()]) {
        const r = await app().request('POST', '/v1/agents', { body: agentBody({ id }) });
        assert.equal(r.status, 201);
        assert.equal(r.body.id, id);
      }
    });

    it('POST /v1/agents - 400 for a client id that is not a UUID v4/v7, 409 for one already taken', async () => {
      for (const id of ['agent-1', 'c232ab00-9414-11ec-b3c8-9f6bdeced846', '']) {
        const r = await app().request('POST', '/v1/agents', { body: agentBody({ id }) });
        assert.equal(r.status, 400, id);
        assert.equal(r.body.status, 400);
      }
      const taken = await create();
      const again = await app().request('POST', '/v1/agents', { body: agentBody({ id: taken.id }) });
      assert.equal(again.status, 409);
    });

    it('POST /v1/agents - 400 without name or system_prompt, with unknown fields or wrong types', async () => {
      for (const body of [
        { system_prompt: 'x' },
        { name: 'x' },
        agentBody({ color: 'red' }),
        agentBody({ tags: 'a' }),
        agentBody({ max_iterations: 0 }),
      ]) {
        const r = await app().request('POST', '/v1/agents', { body });
        assert.equal(r.status, 400, JSON.stringify(body));
      }
    });

    it('requires credentials (401)', async () => {
      const r = await request(app().url, 'GET', '/v1/agents');
      assert.equal(r.status, 401);
    });

    it("GET /v1/agents/{id} - 404 unknown, 403 for another organisation's agent", async () => {
      assert.equal((await app().request('GET', `/v1/agents/${uuidv7()}`)).status, 404);
      const other = await addCaller(app());
      const theirs = await other.request('POST', '/v1/agents', { body: agentBody() });
      assert.equal(theirs.status, 201);
      const r = await app().request('GET', `/v1/agents/${theirs.body.id}`);
      assert.deepEqual(r.body, { error: 'Forbidden', status: 403 });
      for (const [method, path, body] of [
        ['PATCH', `/v1/agents/${theirs.body.id}`, { name: 'x' }],
        ['PUT', `/v1/agents/${theirs.body.id}`, agentBody()],
        ['DELETE', `/v1/agents/${theirs.body.id}`, undefined],
        ['POST', `/v1/agents/${theirs.body.id}/copy`, undefined],
        ['GET', `/v1/agents/${theirs.body.id}/export`, undefined],
      ] as const) {
        assert.equal((await app().request(method, path, { body })).status, 403, `${method} ${path}`);
      }
      const mine = await app().request('GET', '/v1/agents?include_archived=true');
      assert.ok(!mine.body.data.some((a: { id: string }) => a.id === theirs.body.id));
    });

    it('GET /v1/agents - {data,total}; archived only with include_archived=true; tag filter', async () => {
      const caller = await addCaller(app());
      const mk = async (name: string, tags: string[]) =>
        (await caller.request('POST', '/v1/agents', { body: agentBody({ name, tags }) })).body;
      const a = await mk('a', ['red', 'big']);
      const b = await mk('b', ['red']);
      const c = await mk('c', []);
      assert.equal((await caller.request('DELETE', `/v1/agents/${c.id}`)).status, 204);
      const names = (r: { body: { data: { name: string }[] } }) => r.body.data.map((x) => x.name);
      const active = await caller.request('GET', '/v1/agents');
      assert.deepEqual(names(active), ['a', 'b']);
      assert.equal(active.body.total, 2);
      const all = await caller.request('GET', '/v1/agents?include_archived=true');
      assert.deepEqual(names(all), ['a', 'b', 'c']);
      assert.equal(all.body.total, 3);
      assert.deepEqual(names(await caller.request('GET', '/v1/agents?tag=red')), ['a', 'b']);
      assert.deepEqual(names(await caller.request('GET', '/v1/agents?tag=red&tag=big')), ['a']);
      assert.deepEqual(names(await caller.request('GET', '/v1/agents?tag=none')), []);
      assert.equal((await caller.request('GET', '/v1/agents?include_archived=maybe')).status, 400);
      void a;
      void b;
    });

    it('PATCH - changes only the given fields; capabilities replaces the array; null default_model_id removes it', async () => {
      const model = await addModel(app(), await adminOrgId(app()));
      const agent = await create({
        description: 'd',
        tags: ['t'],
        capabilities: ['current_time', 'web_fetch'],
        default_model_id: model,
        max_iterations: 7,
      });
      const r = await app().request('PATCH', `/v1/agents/${agent.id}`, {
        body: { name: 'Renamed', capabilities: [{ ref: 'stateless_todo_list' }] },
      });
      assert.equal(r.status, 200);
      assert.equal(r.body.name, 'Renamed');
      assert.deepEqual(r.body.capabilities, [{ ref: 'stateless_todo_list' }]);
      assert.equal(r.body.description, 'd');
      assert.deepEqual(r.body.tags, ['t']);
      assert.equal(r.body.default_model_id, model);
      assert.equal(r.body.max_iterations, 7);
      assert.equal(r.body.system_prompt, agent.system_prompt);
      const cleared = await app().request('PATCH', `/v1/agents/${agent.id}`, {
        body: { default_model_id: null, description: null, max_iterations: null },
      });
      assert.equal(cleared.body.default_model_id, null);
      assert.equal(cleared.body.description, null);
      assert.equal(cleared.body.max_iterations, null);
      assert.equal(cleared.body.name, 'Renamed');
      assert.deepEqual((await app().request('GET', `/v1/agents/${agent.id}`)).body, cleared.body);
      assert.equal((await app().request('PATCH', `/v1/agents/${uuidv7()}`, { body: { name: 'x' } })).status, 404);
      assert.equal((await app().request('PATCH', `/v1/agents/${agent.id}`, { body: { name: null } })).status, 400);
      assert.equal((await app().request('PATCH', `/v1/agents/${agent.id}`, { body: { id: uuidv7() } })).status, 400);
    });

    it('PATCH - never changes status', async () => {
      const agent = await create();
      const r = await app().request('PATCH', `/v1/agents/${agent.id}`, { body: { status: 'archived', name: 'still active' } });
      assert.equal(r.status, 200);
      assert.equal(r.body.status, 'active');
      await app().request('DELETE', `/v1/agents/${agent.id}`);
      const archived = await app().request('PATCH', `/v1/agents/${agent.id}`, { body: { status: 'active', name: 'still archived' } });
      assert.equal(archived.status, 200);
      assert.equal(archived.body.status, 'archived');
      assert.equal(archived.body.name, 'still archived');
    });

    it('PUT - 201 when the id is new, 200 when it replaces; absent optional fields are reset', async () => {
      const id = randomUUID();
      const created = await app().request('PUT', `/v1/agents/${id}`, {
        body: agentBody({ description: 'first', tags: ['x'], capabilities: ['current_time'] }),
      });
      assert.equal(created.status, 201);
      assert.equal(created.body.id, id);
      assert.equal(created.body.status, 'active');
      const replaced = await app().request('PUT', `/v1/agents/${id}`, { body: { name: 'Second', system_prompt: 'p2' } });
      assert.equal(replaced.status, 200);
      assert.equal(replaced.body.id, id);
      assert.equal(replaced.body.name, 'Second');
      assert.equal(replaced.body.description, null);
      assert.deepEqual(replaced.body.tags, []);
      assert.deepEqual(replaced.body.capabilities, []);
      assert.equal(replaced.body.created_at, created.body.created_at);
      const v7 = uuidv7();
      assert.equal((await app().request('PUT', `/v1/agents/${v7}`, { body: agentBody({ id: v7 }) })).status, 201);
    });

    it('PUT - 400 for an id that is not a UUID v4/v7 or a body id that differs from the path', async () => {
      assert.equal((await app().request('PUT', '/v1/agents/c232ab00-9414-11ec-b3c8-9f6bdeced846', { body: agentBody() })).status, 400);
      assert.equal((await app().request('PUT', '/v1/agents/not-a-uuid', { body: agentBody() })).status, 400);
      assert.equal((await app().request('PUT', `/v1/agents/${randomUUID()}`, { body: agentBody({ id: randomUUID() }) })).status, 400);
    });

    it('DELETE - archives (204); the archived agent can still be read; repeating is harmless', async () => {
      const agent = await create();
      const r = await app().request('DELETE', `/v1/agents/${agent.id}`);
      assert.equal(r.status, 204);
      assert.equal(r.text, '');
      const read = await app().request('GET', `/v1/agents/${agent.id}`);
      assert.equal(read.status, 200);
      assert.equal(read.body.status, 'archived');
      assert.equal((await app().request('DELETE', `/v1/agents/${agent.id}`)).status, 204);
      assert.equal((await app().request('DELETE', `/v1/agents/${uuidv7()}`)).status, 404);
    });

    it('POST copy - 201, a new id, "<name> (copy)", every other field kept, active', async () => {
      const agent = await create({
        description: 'd',
        tags: ['a'],
        capabilities: [{ ref: 'web_fetch', config: { timeout_ms: 5000 } }],
        client_tools: [
          {
            type: 'client',
            name: 'ask_user',
            description: 'Ask',
            parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
          },
        ],
        max_iterations: 3,
      });
      await app().request('DELETE', `/v1/agents/${agent.id}`);
      const r = await app().request('POST', `/v1/agents/${agent.id}/copy`);
      assert.equal(r.status, 201);
      assert.notEqual(r.body.id, agent.id);
      assert.equal(r.body.name, 'Support (copy)');
      assert.equal(r.body.status, 'active');
      for (const k of ['description', 'system_prompt', 'tags', 'capabilities', 'client_tools', 'default_model_id', 'max_iterations'])
        assert.deepEqual(r.body[k], agent[k], k);
      assert.equal((await app().request('POST', `/v1/agents/${uuidv7()}/copy`)).status, 404);
    });

    it('GET export - Markdown that POST import turns into an equal agent', async () => {
      const agent = await create({
        name: 'Exporter: "quoted" #1',
        description: 'multi\nline: yes',
        tags: ['a', 'b'],
        capabilities: ['current_time', { ref: 'web_fetch', config: { timeout_ms: 1500 } }],
        max_iterations: 12,
        system_prompt: '\n# Role\n\nYou are ---\n---\nspecial: ü 🎉\n\n',
        default_model_id: await addModel(app(), await adminOrgId(app())),
      });
      const exp = await app().request('GET', `/v1/agents/${agent.id}/export`);
      assert.equal(exp.status, 200);
      assert.match(exp.headers.get('content-type') ?? '', /^text\/markdown/);
      assert.ok(exp.text.startsWith('---\nname: '));
      const imp = await app().request('POST', '/v1/agents/import', { raw: exp.text, headers: { 'content-type': 'text/markdown' } });
      assert.equal(imp.status, 201, imp.text);
      const strip = (a: Record<string, unknown>) => ({ ...a, id: undefined, created_at: undefined, updated_at: undefined });
      assert.deepEqual(strip(imp.body), strip(agent));
    });
  });
}

agentCrudSuite('postgres');
agentCrudSuite('pglite');
