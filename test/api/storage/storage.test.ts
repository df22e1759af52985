import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addCaller, useSuiteApp } from '../agents/helpers.js';
import { createSession, runTools } from '../fs/helpers.js';

const SECRET = 'sk-live-5ec12e7-do-not-leak';

describe('session storage: key/value and secrets (REST and tools)', () => {
  const suiteApp = useSuiteApp();

  it('kv_store through a turn; GET storage/keys lists the entries', async () => {
    const app = suiteApp();
    const id = await createSession(app, ['session_storage']);
    const [set1, set2] = await runTools(app, id, [
      ['kv_store', { operation: 'set', key: 'plan', value: '{"step":1}' }],
      ['kv_store', { operation: 'set', key: 'notes/today', value: 'ship it' }],
    ]);
    assert.deepEqual(set1!.result, { key: 'plan', stored: true, size_bytes: 10 });
    assert.equal(set2!.success, true);
    // The calls of one step run in parallel: the delete goes in a later step than the list it would race.
    const [get, list, missing] = await runTools(app, id, [
      ['kv_store', { operation: 'get', key: 'plan' }],
      ['kv_store', { operation: 'list', prefix: 'notes/' }],
      ['kv_store', { operation: 'get', key: 'nope' }],
    ]);
    const [del] = await runTools(app, id, [['kv_store', { operation: 'delete', key: 'notes/today' }]]);
    assert.deepEqual(get!.result, { key: 'plan', found: true, value: '{"step":1}' });
    assert.equal(list!.result.total, 1);
    assert.deepEqual(del!.result, { key: 'notes/today', deleted: true });
    assert.deepEqual(missing!.result, { key: 'nope', found: false, value: null });
    const keys = await app.request('GET', `/v1/sessions/${id}/storage/keys`);
    assert.equal(keys.status, 200);
    assert.equal(keys.body.total, 1);
    assert.deepEqual(Object.keys(keys.body.data[0]).sort(), ['created_at', 'key', 'updated_at'], 'names only unless values are asked for');
    const withValues = await app.request('GET', `/v1/sessions/${id}/storage/keys?include_values=true`);
    assert.equal(withValues.body.data[0].value, '{"step":1}');
  });

  it('secrets: PUT stores, GET lists names only, the tool tells existence only; values never reach responses or logs', async () => {
    const app = suiteApp();
    const id = await createSession(app, ['session_storage']);
    const put = await app.request('PUT', `/v1/sessions/${id}/storage/secrets`, {
      body: { secrets: { API_TOKEN: SECRET, 'connection:github': 'ghp_other_value' } },
    });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(
      put.body.data.map((s: any) => s.name),
      ['API_TOKEN', 'connection:github'],
    );
    assert.ok(!put.text.includes(SECRET));
    const list = await app.request('GET', `/v1/sessions/${id}/storage/secrets`);
    assert.deepEqual(
      list.body.data.map((s: any) => Object.keys(s).sort()),
      [
        ['allowed_hosts', 'created_at', 'name', 'updated_at'],
        ['allowed_hosts', 'created_at', 'name', 'updated_at'],
      ],
    );
    assert.ok(!list.text.includes(SECRET));

    const [read, listed] = await runTools(app, id, [
      ['secret_store', { operation: 'get', name: 'API_TOKEN' }],
      ['secret_store', { operation: 'list' }],
    ]);
    assert.equal(read!.result.found, true);
    assert.equal(read!.result.value, undefined, 'no tool returns a secret value');
    assert.deepEqual(
      listed!.result.secrets.map((s: any) => s.name),
      ['API_TOKEN', 'connection:github'],
    );
    const [stored] = await runTools(app, id, [['secret_store', { operation: 'set', name: 'FROM_TOOL', value: 'tool-made-secret' }]]);
    assert.deepEqual(stored!.result, { name: 'FROM_TOOL', stored: true });
    assert.ok(!(await app.request('GET', `/v1/sessions/${id}/storage/secrets`)).text.includes('tool-made-secret'));

    const [row] = await app.app.services.store.sql<{ ciphertext: string }>(
      `select ciphertext from session_secrets where name = 'API_TOKEN'`,
    );
    assert.ok(!row!.ciphertext.includes(SECRET), 'encrypted at rest');
    await new Promise((r) => setTimeout(r, 100));
    assert.ok(!app.logs.join('').includes(SECRET), 'secret value in the logs');
    assert.ok(!app.logs.join('').includes('tool-made-secret'), 'secret value in the logs');
  });

  it('PUT secrets validates names and bodies (400, nothing echoed)', async () => {
    const app = suiteApp();
    const id = await createSession(app, ['session_storage']);
    for (const body of [
      {},
      { secrets: {} },
      { secrets: { 'bad name': 'v' } },
      { secrets: { A: 1 } },
      { secrets: { A: 'v' }, extra: true },
    ]) {
      const r = await app.request('PUT', `/v1/sessions/${id}/storage/secrets`, { body });
      assert.equal(r.status, 400, JSON.stringify(body));
    }
  });

  it('DELETE storage/secrets/{name}: gone from the list and from the tool; unknown → 404, bad name → 400, a stranger → 403', async () => {
    const app = suiteApp();
    const id = await createSession(app, ['session_storage']);
    const put = await app.request('PUT', `/v1/sessions/${id}/storage/secrets`, { body: { secrets: { KEEP: 'k-value', DROP: 'd-value' } } });
    assert.equal(put.status, 200, put.text);
    const stranger = await addCaller(app);
    assert.equal((await stranger.request('DELETE', `/v1/sessions/${id}/storage/secrets/DROP`)).status, 403);
    const del = await app.request('DELETE', `/v1/sessions/${id}/storage/secrets/DROP`);
    assert.equal(del.status, 204, del.text);
    const names = await app.request('GET', `/v1/sessions/${id}/storage/secrets`);
    assert.deepEqual(
      names.body.data.map((s: any) => s.name),
      ['KEEP'],
    );
    const [read] = await runTools(app, id, [['secret_store', { operation: 'get', name: 'DROP' }]]);
    assert.equal(read!.result.found, false);
    assert.deepEqual((await app.request('DELETE', `/v1/sessions/${id}/storage/secrets/DROP`)).body, {
      error: 'No such secret',
      status: 404,
    });
    assert.equal((await app.request('DELETE', `/v1/sessions/${id}/storage/secrets/${encodeURIComponent('bad name')}`)).status, 400);
    const bare = await createSession(app, ['current_time']);
    assert.equal((await app.request('DELETE', `/v1/sessions/${bare}/storage/secrets/KEEP`)).status, 404);
  });

  it('without session_storage the routes are 404; another org gets 403', async () => {
    const app = suiteApp();
    const bare = await createSession(app, ['current_time']);
    assert.equal((await app.request('GET', `/v1/sessions/${bare}/storage/keys`)).status, 404);
    assert.equal((await app.request('GET', `/v1/sessions/${bare}/storage/secrets`)).status, 404);
    assert.equal((await app.request('PUT', `/v1/sessions/${bare}/storage/secrets`, { body: { secrets: { A: 'v' } } })).status, 404);
    const id = await createSession(app, ['session_storage']);
    const stranger = await addCaller(app);
    assert.equal((await stranger.request('GET', `/v1/sessions/${id}/storage/keys`)).status, 403);
    assert.equal((await stranger.request('PUT', `/v1/sessions/${id}/storage/secrets`, { body: { secrets: { A: 'v' } } })).status, 403);
  });

  it('SQL tools: one database per (session, name); another session cannot reach it', async () => {
    const app = suiteApp();
    const a = await createSession(app, ['session_sql_database']);
    const b = await createSession(app, ['session_sql_database']);
    const [create] = await runTools(app, a, [
      ['sql_execute', { database: 'crm', sql: 'create table people (name text); insert into people values (?)', params: [] }],
    ]);
    assert.equal(create!.success, false, 'params need exactly one statement');
    const [made, inserted] = await runTools(app, a, [['sql_execute', { database: 'crm', sql: 'create table people (name text)' }]]).then(
      async (first) => [
        first[0],
        (
          await runTools(app, a, [
            ['sql_execute', { database: 'crm', sql: 'insert into people values (?), (?)', params: ['Ada', 'Grace'] }],
          ])
        )[0],
      ],
    );
    assert.equal(made!.success, true);
    assert.equal(inserted!.result.changes, 2);
    const [query, schema, list] = await runTools(app, a, [
      ['sql_query', { database: 'crm', sql: 'select name from people order by name' }],
      ['sql_schema', { database: 'crm' }],
      ['sql_schema', {}],
    ]);
    assert.deepEqual(query!.result.rows, [['Ada'], ['Grace']]);
    assert.equal(query!.result.truncated, false);
    assert.equal(schema!.result.objects[0].name, 'people');
    assert.deepEqual(
      list!.result.databases.map((d: any) => d.name),
      ['crm'],
    );

    const [other, otherList, attach] = await runTools(app, b, [
      ['sql_query', { database: 'crm', sql: 'select * from people' }],
      ['sql_schema', {}],
      ['sql_execute', { database: 'mine', sql: `attach database 'crm' as stolen` }],
    ]);
    assert.equal(other!.success, false);
    assert.deepEqual(otherList!.result.databases, []);
    assert.equal(attach!.success, false);
  });
});
