import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sessionStorageCapability } from '../../src/capabilities/session-storage.js';
import { ToolError } from '../../src/capabilities/types.js';
import { createFakeToolContext, jsonOf, toolOf } from './fakes.js';

const kv = toolOf(sessionStorageCapability, 'kv_store');
const secrets = toolOf(sessionStorageCapability, 'secret_store');
const isToolError = (pattern: RegExp) => (e: unknown) => e instanceof ToolError && pattern.test(e.message);

describe('kv_store', () => {
  it('sets, gets, lists and deletes values', async () => {
    const ctx = createFakeToolContext();
    assert.deepEqual(jsonOf(await kv.execute({ operation: 'set', key: 'plan', value: '{"step":1}' }, ctx)), { key: 'plan', stored: true, size_bytes: 10 });
    await kv.execute({ operation: 'set', key: 'notes/a', value: 'x' }, ctx);
    assert.deepEqual(jsonOf(await kv.execute({ operation: 'get', key: 'plan' }, ctx)), { key: 'plan', found: true, value: '{"step":1}' });
    const listed = jsonOf<{ keys: { key: string }[]; total: number }>(await kv.execute({ operation: 'list' }, ctx));
    assert.deepEqual(listed.keys.map((k) => k.key), ['notes/a', 'plan']);
    const prefixed = jsonOf<{ keys: { key: string }[] }>(await kv.execute({ operation: 'list', prefix: 'notes/' }, ctx));
    assert.deepEqual(prefixed.keys.map((k) => k.key), ['notes/a']);
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

  it('refuses missing fields, control characters, oversize values and unknown operations', async () => {
    const ctx = createFakeToolContext();
    await assert.rejects(kv.execute({ operation: 'get' }, ctx), isToolError(/"key" is required for operation "get"/));
    await assert.rejects(kv.execute({ operation: 'set', key: 'k' }, ctx), isToolError(/"value" is required for operation "set"/));
    await assert.rejects(kv.execute({ operation: 'set', key: 'a\nb', value: 'v' }, ctx), isToolError(/control characters/));
    await assert.rejects(kv.execute({ operation: 'set', key: 'k', value: 'x'.repeat(1024 * 1024 + 1) }, ctx), isToolError(/maximum is 1048576/));
    await assert.rejects(kv.execute({ operation: 'patch', key: 'k' }, ctx), isToolError(/must be one of/));
    assert.equal(ctx.kv.entries.size, 0);
  });
});

describe('secret_store', () => {
  it('stores without echoing the value, lists names only, gets and deletes', async () => {
    const ctx = createFakeToolContext();
    const set = await secrets.execute({ operation: 'set', name: 'GITHUB_TOKEN', value: 'ghp_abc123' }, ctx);
    assert.deepEqual(jsonOf(set), { name: 'GITHUB_TOKEN', stored: true });
    assert.equal(ctx.secrets.values.get('GITHUB_TOKEN'), 'ghp_abc123');
    const list = await secrets.execute({ operation: 'list' }, ctx);
    assert.doesNotMatch(list.content[0]!.text, /ghp_abc123/);
    assert.deepEqual(jsonOf<{ secrets: { name: string }[] }>(list).secrets.map((s) => s.name), ['GITHUB_TOKEN']);
    assert.deepEqual(jsonOf(await secrets.execute({ operation: 'get', name: 'GITHUB_TOKEN' }, ctx)), { name: 'GITHUB_TOKEN', found: true, value: 'ghp_abc123' });
    assert.deepEqual(jsonOf(await secrets.execute({ operation: 'delete', name: 'GITHUB_TOKEN' }, ctx)), { name: 'GITHUB_TOKEN', deleted: true });
    assert.deepEqual(jsonOf(await secrets.execute({ operation: 'get', name: 'GITHUB_TOKEN' }, ctx)), { name: 'GITHUB_TOKEN', found: false, value: null });
  });

  it('refuses invalid names and oversize values', async () => {
    const ctx = createFakeToolContext();
    await assert.rejects(secrets.execute({ operation: 'set', name: '1abc', value: 'v' }, ctx), isToolError(/Invalid secret name/));
    await assert.rejects(secrets.execute({ operation: 'get', name: 'a b' }, ctx), isToolError(/Invalid secret name/));
    await assert.rejects(secrets.execute({ operation: 'set', name: 'BIG', value: 'x'.repeat(64 * 1024 + 1) }, ctx), isToolError(/maximum is 65536/));
    await assert.rejects(secrets.execute({ operation: 'delete' }, ctx), isToolError(/"name" is required/));
    assert.equal(ctx.secrets.values.size, 0);
  });
});
