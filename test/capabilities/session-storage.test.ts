import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sessionStorageCapability } from '../../src/capabilities/session-storage.js';
import { ToolError } from '../../src/capabilities/types.js';
import { FAKE_NOW, createFakeToolContext, jsonOf, toolOf } from './fakes.js';

const kv = toolOf(sessionStorageCapability, 'kv_store');
const secrets = toolOf(sessionStorageCapability, 'secret_store');
const isToolError = (pattern: RegExp) => (e: unknown) => e instanceof ToolError && pattern.test(e.message);

describe('kv_store', () => {
  it('sets, gets, lists and deletes values', async () => {
    const ctx = createFakeToolContext();
    assert.deepEqual(jsonOf(await kv.execute({ operation: 'set', key: 'plan', value: '{"step":1}' }, ctx)), {
      key: 'plan',
      stored: true,
      size_bytes: 10,
    });
    await kv.execute({ operation: 'set', key: 'notes/a', value: 'x' }, ctx);
    assert.deepEqual(jsonOf(await kv.execute({ operation: 'get', key: 'plan' }, ctx)), { key: 'plan', found: true, value: '{"step":1}' });
    const listed = jsonOf<{ keys: { key: string }[]; total: number }>(await kv.execute({ operation: 'list' }, ctx));
    assert.deepEqual(
      listed.keys.map((k) => k.key),
      ['notes/a', 'plan'],
    );
    const prefixed = jsonOf<{ keys: { key: string }[] }>(await kv.execute({ operation: 'list', prefix: 'notes/' }, ctx));
    assert.deepEqual(
      prefixed.keys.map((k) => k.key),
      ['notes/a'],
    );
    assert.deepEqual(jsonOf(await kv.execute({ operation: 'delete', key: 'plan' }, ctx)), { key: 'plan', deleted: true });
    assert.deepEqual(jsonOf(await kv.execute({ operation: 'get', key: 'plan' }, ctx)), { key: 'plan', found: false, value: null });
    assert.deepEqual(jsonOf(await kv.execute({ operation: 'delete', key: 'plan' }, ctx)), { key: 'plan', deleted: false });
    assert.equal(ctx.kv.entries.size, 1);
  });

  it('lists keys without values', async () => {
    const ctx = createFakeToolContext();
    await kv.execute({ operation: 'set', key: 'k', value: 'secret-ish' }, ctx);
    assert.doesNotMatch((await kv.execute({ operation: 'list' }, ctx)).content[0]!.text, /secret-ish/);
  });

  it('lists a page at a time (limit, offset) with the total', async () => {
    const ctx = createFakeToolContext();
    for (const k of ['a', 'b', 'c', 'd', 'e']) await kv.execute({ operation: 'set', key: k, value: k }, ctx);
    const page = jsonOf<{ keys: { key: string }[]; total: number; offset: number; limit: number }>(
      await kv.execute({ operation: 'list', limit: 2, offset: 2 }, ctx),
    );
    assert.deepEqual(
      page.keys.map((k) => k.key),
      ['c', 'd'],
    );
    assert.deepEqual([page.total, page.offset, page.limit], [5, 2, 2]);
    await assert.rejects(kv.execute({ operation: 'list', limit: 1001 }, ctx), isToolError(/limit/));
  });

  it('refuses missing fields, control characters, oversize values and unknown operations', async () => {
    const ctx = createFakeToolContext();
    await assert.rejects(kv.execute({ operation: 'get' }, ctx), isToolError(/"key" is required for operation "get"/));
    await assert.rejects(kv.execute({ operation: 'set', key: 'k' }, ctx), isToolError(/"value" is required for operation "set"/));
    await assert.rejects(kv.execute({ operation: 'set', key: 'a\nb', value: 'v' }, ctx), isToolError(/control characters/));
    await assert.rejects(
      kv.execute({ operation: 'set', key: 'k', value: 'x'.repeat(1024 * 1024 + 1) }, ctx),
      isToolError(/maximum is 1048576/),
    );
    await assert.rejects(kv.execute({ operation: 'patch', key: 'k' }, ctx), isToolError(/must be one of/));
    assert.equal(ctx.kv.entries.size, 0);
  });
});

describe('secret_store', () => {
  it('set takes allowed_hosts (normalised, validated); without them a replaced secret keeps its hosts', async () => {
    const ctx = createFakeToolContext();
    await secrets.execute({ operation: 'set', name: 'T', value: 'v1', allowed_hosts: ['API.Example.com', '*.example.org'] }, ctx);
    await secrets.execute({ operation: 'set', name: 'T', value: 'v2' }, ctx);
    assert.deepEqual(await ctx.secrets.get('T'), { value: 'v2', allowed_hosts: ['api.example.com', '*.example.org'] });
    const listed = jsonOf<{ secrets: { allowed_hosts: string[] }[] }>(await secrets.execute({ operation: 'list' }, ctx));
    assert.deepEqual(listed.secrets[0]!.allowed_hosts, ['api.example.com', '*.example.org']);
    await assert.rejects(
      secrets.execute({ operation: 'set', name: 'T', value: 'v3', allowed_hosts: ['https://evil.test/'] }, ctx),
      isToolError(/Invalid allowed_hosts/),
    );
    assert.equal((await ctx.secrets.get('T'))!.value, 'v2', 'a refused set changes nothing');
  });

  it('stores without echoing the value, lists names only, get tells existence (never the value), deletes', async () => {
    const ctx = createFakeToolContext();
    const set = await secrets.execute({ operation: 'set', name: 'GITHUB_TOKEN', value: 'ghp_abc123' }, ctx);
    assert.deepEqual(jsonOf(set), { name: 'GITHUB_TOKEN', stored: true });
    assert.equal(ctx.secrets.values.get('GITHUB_TOKEN'), 'ghp_abc123');
    const list = await secrets.execute({ operation: 'list' }, ctx);
    assert.doesNotMatch(list.content[0]!.text, /ghp_abc123/);
    assert.deepEqual(
      jsonOf<{ secrets: { name: string }[] }>(list).secrets.map((s) => s.name),
      ['GITHUB_TOKEN'],
    );
    const got = await secrets.execute({ operation: 'get', name: 'GITHUB_TOKEN' }, ctx);
    assert.doesNotMatch(got.content[0]!.text, /ghp_abc123/);
    assert.deepEqual(jsonOf(got), {
      name: 'GITHUB_TOKEN',
      found: true,
      allowed_hosts: [],
      created_at: FAKE_NOW.toISOString(),
      updated_at: FAKE_NOW.toISOString(),
      use_as: '{{secret:GITHUB_TOKEN}}',
    });
    assert.deepEqual(jsonOf(await secrets.execute({ operation: 'delete', name: 'GITHUB_TOKEN' }, ctx)), {
      name: 'GITHUB_TOKEN',
      deleted: true,
    });
    assert.deepEqual(jsonOf(await secrets.execute({ operation: 'get', name: 'GITHUB_TOKEN' }, ctx)), {
      name: 'GITHUB_TOKEN',
      found: false,
      use_as: '{{secret:GITHUB_TOKEN}}',
    });
  });

  it('refuses to overwrite or delete the connection secrets a user connection injected', async () => {
    const ctx = createFakeToolContext();
    await ctx.secrets.set('connection:github', { value: 'ghp_user_token' });
    await assert.rejects(
      secrets.execute({ operation: 'set', name: 'connection:github', value: 'x' }, ctx),
      isToolError(/belong to the user's connections/),
    );
    await assert.rejects(
      secrets.execute({ operation: 'delete', name: 'connection:github' }, ctx),
      isToolError(/belong to the user's connections/),
    );
    assert.equal(ctx.secrets.values.get('connection:github'), 'ghp_user_token');
  });

  it('refuses invalid names and oversize values', async () => {
    const ctx = createFakeToolContext();
    await assert.rejects(secrets.execute({ operation: 'set', name: '1abc', value: 'v' }, ctx), isToolError(/Invalid secret name/));
    await assert.rejects(secrets.execute({ operation: 'get', name: 'a b' }, ctx), isToolError(/Invalid secret name/));
    await assert.rejects(
      secrets.execute({ operation: 'set', name: 'BIG', value: 'x'.repeat(64 * 1024 + 1) }, ctx),
      isToolError(/maximum is 65536/),
    );
    await assert.rejects(secrets.execute({ operation: 'delete' }, ctx), isToolError(/"name" is required/));
    assert.equal(ctx.secrets.values.size, 0);
  });
});
