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

  it('a prompt far over 1 MB gets 400 up to the transport limit on every write route; only a larger body gets 413', async () => {
    const huge = bytes(5 * 1024 * 1024);
    const created = await app().request('POST', '/v1/agents', { body: agentBody() });
    const id = created.body.id;
    const writes: [string, string, unknown][] = [
      ['POST', '/v1/agents', agentBody({ system_prompt: huge })],
      ['PUT', `/v1/agents/${id}`, agentBody({ system_prompt: huge })],
      ['PATCH', `/v1/agents/${id}`, { system_prompt: huge }],
      ['POST', '/v1/agents/preview', { system_prompt: huge }],
      ['POST', '/v1/harnesses', { name: 'h', system_prompt: huge }],
    ];
    for (const [method, path, body] of writes) {
      const r = await app().request(method, path, { body });
      assert.deepEqual(r.body, LIMITED, `${method} ${path}: ${r.status}`);
    }
    const md = `---\nname: big\n---\n\n${huge}`;
    assert.deepEqual(
      (await app().request('POST', '/v1/agents/import', { raw: md, headers: { 'content-type': 'text/markdown' } })).body,
      LIMITED,
    );
    const beyond = await app().request('POST', '/v1/agents', { body: agentBody({ system_prompt: bytes(9 * 1024 * 1024) }) });
    assert.equal(beyond.status, 413, 'above the transport limit (8 MiB) the body is not read');
  });
});
