import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentBody, useSuiteApp } from './helpers.js';

const LIMITED = { error: 'Input exceeds allowed limits', status: 400 };

/** `n` UTF-8 bytes made of `unit` (whose byte length divides into n) plus ASCII padding. */
function bytes(n: number, unit = 'a'): string {
  const size = Buffer.byteLength(unit);
  const s = unit.repeat(Math.floor(n / size)) + 'a'.repeat(n % size);
  assert.equal(Buffer.byteLength(s), n);
  return s;
}

describe('agent size limits (spec 8, UTF-8 bytes)', () => {
  const app = useSuiteApp('postgres');
  const cases = [
    { field: 'name', limit: 2048 },
    { field: 'description', limit: 10240 },
    { field: 'system_prompt', limit: 1048576 },
  ];

  for (const { field, limit } of cases) {
    for (const unit of ['a', 'é', '€', '🎉']) {
      it(`POST - ${field} of exactly ${limit} bytes of "${unit}" passes, one byte more fails`, async () => {
        const ok = await app().request('POST', '/v1/agents', { body: agentBody({ [field]: bytes(limit, unit) }) });
        assert.equal(ok.status, 201, ok.text.slice(0, 200));
        assert.equal(ok.body[field], bytes(limit, unit));
        const over = await app().request('POST', '/v1/agents', { body: agentBody({ [field]: bytes(limit, unit) + 'a' }) });
        assert.deepEqual(over.body, LIMITED);
      });
    }

    it(`counts bytes, not characters: ${field} of ${limit / 2 + 1} two-byte characters fails`, async () => {
      const r = await app().request('POST', '/v1/agents', { body: agentBody({ [field]: 'é'.repeat(limit / 2 + 1) }) });
      assert.deepEqual(r.body, LIMITED);
    });

    it(`PUT and PATCH - ${field} at the limit passes, one byte over fails`, async () => {
      const created = await app().request('POST', '/v1/agents', { body: agentBody() });
      const id = created.body.id;
      const at = bytes(limit, '€');
      assert.equal((await app().request('PATCH', `/v1/agents/${id}`, { body: { [field]: at } })).status, 200);
      assert.deepEqual((await app().request('PATCH', `/v1/agents/${id}`, { body: { [field]: at + 'x' } })).body, LIMITED);
      assert.equal((await app().request('PUT', `/v1/agents/${id}`, { body: agentBody({ [field]: at }) })).status, 200);
      assert.deepEqual((await app().request('PUT', `/v1/agents/${id}`, { body: agentBody({ [field]: at + 'x' }) })).body, LIMITED);
    });
  }

  it('capabilities: 250 items pass, 251 fail (POST, PUT, PATCH)', async () => {
    const caps = (n: number) => Array.from({ length: n }, (_, i) => (i % 2 ? 'current_time' : { ref: 'stateless_todo_list' }));
    const ok = await app().request('POST', '/v1/agents', { body: agentBody({ capabilities: caps(250) }) });
    assert.equal(ok.status, 201, ok.text);
    assert.equal(ok.body.capabilities.length, 250);
    assert.deepEqual((await app().request('POST', '/v1/agents', { body: agentBody({ capabilities: caps(251) }) })).body, LIMITED);
    assert.deepEqual(
      (await app().request('PUT', `/v1/agents/${ok.body.id}`, { body: agentBody({ capabilities: caps(251) }) })).body,
      LIMITED,
    );
    assert.deepEqual((await app().request('PATCH', `/v1/agents/${ok.body.id}`, { body: { capabilities: caps(251) } })).body, LIMITED);
    assert.equal((await app().request('PATCH', `/v1/agents/${ok.body.id}`, { body: { capabilities: caps(250) } })).status, 200);
  });

  it('an oversize field gets the limits message even when the capability refs are unknown', async () => {
    const r = await app().request('POST', '/v1/agents', { body: agentBody({ name: bytes(2049), capabilities: ['no_such_capability'] }) });
    assert.deepEqual(r.body, LIMITED);
  });

  it('preview and import apply the same limits', async () => {
    const preview = await app().request('POST', '/v1/agents/preview', { body: { system_prompt: bytes(1048577) } });
    assert.deepEqual(preview.body, LIMITED);
    const md = `---\nname: ${bytes(2049)}\n---\nprompt`;
    const imp = await app().request('POST', '/v1/agents/import', { raw: md, headers: { 'content-type': 'text/markdown' } });
    assert.deepEqual(imp.body, LIMITED);
    const mdPrompt = `---\nname: ok\n---\n\n${bytes(1048577, '€')}`;
    assert.deepEqual(
      (await app().request('POST', '/v1/agents/import', { raw: mdPrompt, headers: { 'content-type': 'text/markdown' } })).body,
      LIMITED,
    );
  });

  it('a body far above every limit is refused with 413 before it is read in full', async () => {
    const r = await app().request('POST', '/v1/agents', { body: agentBody({ system_prompt: bytes(5 * 1024 * 1024) }) });
    assert.equal(r.status, 413);
  });
});
