/**
 * Issue 30 item 17: `initial_files` (earlier public API `InitialFile`) on session create, and
 * what its SDK's agent model requires. Files are checked before anything is written and land in
 * the session's file system; agents accept only `[]` and show `harness_id`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useSuiteApp } from '../api/agents/helpers.js';

const GENERIC = '00000000-0000-4000-8000-000000000001';

describe('initial_files and the agent harness_id', () => {
  const app = useSuiteApp('postgres');

  async function agent(extra: Record<string, unknown> = {}) {
    const res = await app().request('POST', '/v1/agents', { body: { name: 'starter', system_prompt: 'S.', ...extra } });
    assert.equal(res.status, 201, res.text);
    return res.body;
  }
  const sessionCount = async () => (await app().request('GET', '/v1/sessions?limit=100')).body.total as number;

  it('agents take initial_files [] (what the SDK always sends), refuse files, and show the harness of their sessions', async () => {
    const a = await agent({ initial_files: [], tags: [], capabilities: [], tools: [] });
    assert.equal(a.harness_id, GENERIC);
    assert.equal((await app().request('GET', `/v1/agents/${a.id}`)).body.harness_id, GENERIC);
    const files = [{ path: '/a.txt', content: 'x' }];
    const refused = await app().request('POST', '/v1/agents', { body: { name: 'f', system_prompt: 'S.', initial_files: files } });
    assert.equal(refused.status, 400);
    assert.match(refused.body.error, /give them on session create/);
    const patched = await app().request('PATCH', `/v1/agents/${a.id}`, { body: { initial_files: files } });
    assert.equal(patched.status, 400);
    // A client that PUTs back what it read (the SDK's apply) sends harness_id too; another harness is refused.
    const { id, ...echoed } = a;
    const put = await app().request('PUT', `/v1/agents/${id}`, { body: echoed });
    assert.equal(put.status, 200, put.text);
    const other = await app().request('PATCH', `/v1/agents/${id}`, { body: { harness_id: '00000000-0000-4000-8000-000000000002' } });
    assert.equal(other.status, 400);
    assert.match(other.body.error, /give harness_id on session create/);
    const session = await app().request('POST', '/v1/sessions', { body: { agent_id: a.id } });
    assert.equal(session.body.harness_id, a.harness_id, 'the agent view names the harness its sessions get');
  });

  it('session starter files land in the file system (text, base64, read-only, /workspace prefix, later path wins)', async () => {
    const a = await agent();
    const res = await app().request('POST', '/v1/sessions', {
      body: {
        agent_id: a.id,
        initial_files: [
          { path: '/workspace/README.md', content: 'old', encoding: 'text' },
          { path: 'bin/blob', content: Buffer.from([0, 1, 2, 255]).toString('base64'), encoding: 'base64' },
          { path: '/workspace/README.md', content: '# Demo\n', is_readonly: true },
        ],
      },
    });
    assert.equal(res.status, 201, res.text);
    assert.ok(res.body.features.includes('file_system'), 'starter files bring a file system');
    const readme = await app().request('GET', `/v1/sessions/${res.body.id}/fs/README.md`);
    assert.equal(readme.status, 200, readme.text);
    assert.equal(readme.text, '# Demo\n');
    const blob = await fetch(`${app().url}/v1/sessions/${res.body.id}/fs/bin/blob`, {
      headers: { Authorization: `Bearer ${app().adminKey}` },
    });
    assert.deepEqual([...new Uint8Array(await blob.arrayBuffer())], [0, 1, 2, 255]);
    const overwrite = await app().request('PUT', `/v1/sessions/${res.body.id}/fs/README.md`, {
      raw: 'changed',
      headers: { 'Content-Type': 'text/plain' },
    });
    assert.ok(overwrite.status >= 400 && overwrite.status < 500, `read-only: ${overwrite.status}`);
  });

  it('bad starter files are 4xx and create nothing', async () => {
    const a = await agent();
    const before = await sessionCount();
    const cases: [unknown[], number, RegExp][] = [
      [[{ path: '/a/../b', content: 'x' }], 400, /\.\./],
      [[{ path: '/a', content: '!!!', encoding: 'base64' }], 400, /not valid base64/],
      [[{ path: '/a', content: 'x', encoding: 'utf16' }], 400, /encoding/],
      [[{ path: '/a', content: 'x', mode: 1 }], 400, /mode/],
      [
        [
          { path: '/d', content: 'x' },
          { path: '/d/e', content: 'y' },
        ],
        400,
        /as a file and as the directory/,
      ],
      [Array.from({ length: 101 }, (_, i) => ({ path: `/f${i}`, content: '' })), 400, /initial_files/],
    ];
    for (const [initial_files, status, message] of cases) {
      const res = await app().request('POST', '/v1/sessions', { body: { agent_id: a.id, initial_files } });
      assert.equal(res.status, status, `${JSON.stringify(initial_files).slice(0, 80)}: ${res.text}`);
      assert.match(res.body.error, message);
      assert.equal(res.body.status, status);
    }
    // Over the session's per-file limit (an agent that sets it to 1 KiB): 413, nothing created.
    const small = await agent({ capabilities: [{ ref: 'session_file_system', config: { max_file_size: 1024 } }] });
    const big = await app().request('POST', '/v1/sessions', {
      body: { agent_id: small.id, initial_files: [{ path: '/big', content: 'x'.repeat(2048) }] },
    });
    assert.equal(big.status, 413, big.text);
    assert.match(big.body.error, /maximum file size is 1024 bytes/);
    assert.equal(await sessionCount(), before);
  });
});
