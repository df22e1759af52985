import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { agentBody, useSuiteApp } from './helpers.js';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

const EXPECTED: Record<string, Record<string, unknown>> = {
  'valid-agent.md': {
    name: 'Release Notes Writer',
    description: 'Turns merged pull requests into release notes.',
    tags: ['docs', 'release'],
    capabilities: ['current_time', { ref: 'web_fetch', config: { timeout_ms: 10000 } }],
    client_tools: [],
    system_prompt: '# Role\n\nYou write release notes for the product team.\n\n- Group changes by area.\n- Keep each entry to one line.\n',
  },
  'valid-agent.yaml': {
    name: 'Triage Bot',
    description: 'Labels incoming issues.\nAsks for missing details.\n',
    tags: ['triage'],
    capabilities: ['stateless_todo_list', { ref: 'current_time', config: { default_timezone: 'Europe/Paris' } }],
    client_tools: [
      {
        type: 'client',
        name: 'apply_label',
        description: 'Applies a label to the issue.',
        parameters: { type: 'object', properties: { label: { type: 'string' } }, required: ['label'] },
      },
    ],
    max_iterations: 20,
    system_prompt: 'You triage GitHub issues. Label them and ask for reproduction steps when missing.\n',
  },
  'valid-agent.json': {
    name: 'Data Analyst',
    description: 'Answers questions with SQL.',
    tags: ['data'],
    capabilities: [{ ref: 'session_sql_database' }, 'current_time'],
    client_tools: [],
    system_prompt: 'You analyse data with SQL and explain results plainly.',
  },
};

const MEDIA: Record<string, string> = { md: 'text/markdown', yaml: 'application/yaml', json: 'application/json' };
const mediaOf = (file: string) => MEDIA[file.split('.').pop()!]!;

describe('POST /v1/agents/import and GET /v1/agents/{id}/export', () => {
  const app = useSuiteApp('postgres');
  const importRaw = (raw: string, contentType?: string) =>
    app().request('POST', '/v1/agents/import', { raw, headers: contentType ? { 'content-type': contentType } : {} });

  for (const [file, expected] of Object.entries(EXPECTED)) {
    it(`imports ${file} sent as ${mediaOf(file)} - 201, a new active agent`, async () => {
      const r = await importRaw(fixture(file), mediaOf(file));
      assert.equal(r.status, 201, r.text);
      assert.equal(r.body.status, 'active');
      for (const [k, v] of Object.entries(expected)) assert.deepEqual(r.body[k], v, k);
      assert.deepEqual((await app().request('GET', `/v1/agents/${r.body.id}`)).body, r.body);
    });

    it(`detects the format of ${file} from its content when the Content-Type does not say`, async () => {
      for (const ct of [undefined, 'text/plain', 'application/octet-stream']) {
        const r = await importRaw(fixture(file), ct);
        assert.equal(r.status, 201, `${ct}: ${r.text}`);
        assert.equal(r.body.name, expected['name']);
        assert.equal(r.body.system_prompt, expected['system_prompt']);
      }
    });
  }

  const BROKEN: [file: string, contentType: string | undefined, format: string][] = [
    ['broken-front-matter.md', 'text/markdown', 'Markdown'],
    ['broken-front-matter.md', undefined, 'Markdown'],
    ['no-front-matter.md', 'text/markdown', 'Markdown'],
    ['broken.yaml', 'application/yaml', 'YAML'],
    ['broken.yaml', undefined, 'YAML'],
    ['not-a-mapping.yaml', 'application/x-yaml', 'YAML'],
    ['broken.json', 'application/json', 'JSON'],
    ['broken.json', undefined, 'JSON'],
    ['wrong-types.json', 'application/json', 'JSON'],
  ];
  for (const [file, ct, format] of BROKEN) {
    it(`rejects ${file} (${ct ?? 'no Content-Type'}) with 400 naming ${format}`, async () => {
      const r = await importRaw(fixture(file), ct);
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.status, 400);
      assert.match(r.body.error, new RegExp(`\\b${format}\\b`));
    });
  }

  it('rejects an empty body with 400', async () => {
    assert.equal((await importRaw('', 'application/json')).status, 400);
    assert.equal((await importRaw('   \n')).status, 400);
  });

  it('names the field of a well-formed document that breaks the agent rules', async () => {
    const r = await importRaw(fixture('wrong-types.json'), 'application/json');
    assert.match(r.body.error, /name must be string/);
    const extra = await importRaw('{"name":"x","system_prompt":"y","colour":"red"}', 'application/json');
    assert.equal(extra.status, 400);
    assert.match(extra.body.error, /colour is not allowed/);
  });

  it('422 for an unknown capability or a config that does not match its schema', async () => {
    const unknown = await importRaw(fixture('unknown-capability.yaml'), 'application/yaml');
    assert.equal(unknown.status, 422);
    const badConfig = await importRaw(fixture('bad-capability-config.md'), 'text/markdown');
    assert.equal(badConfig.status, 422);
  });

  it('always creates a new agent: an id and server fields in the document are ignored', async () => {
    const original = (await app().request('POST', '/v1/agents', { body: agentBody() })).body;
    const r = await importRaw(JSON.stringify({ ...original, status: 'archived' }), 'application/json');
    assert.equal(r.status, 201, r.text);
    assert.notEqual(r.body.id, original.id);
    assert.equal(r.body.status, 'active');
    assert.equal(r.body.name, original.name);
  });

  it('takes system_prompt from the front matter when the Markdown body is empty; 400 when both are given', async () => {
    const only = await importRaw('---\nname: Front\nsystem_prompt: From the front matter\n---\n', 'text/markdown');
    assert.equal(only.status, 201, only.text);
    assert.equal(only.body.system_prompt, 'From the front matter');
    const both = await importRaw('---\nname: Both\nsystem_prompt: one\n---\ntwo', 'text/markdown');
    assert.equal(both.status, 400);
    assert.match(both.body.error, /Markdown/);
  });

  it('keeps CRLF line endings of the Markdown body and accepts a UTF-8 BOM', async () => {
    const r = await importRaw('\uFEFF---\r\nname: Windows\r\n---\r\nLine one\r\nLine two\r\n', 'text/markdown');
    assert.equal(r.status, 201, r.text);
    assert.equal(r.body.name, 'Windows');
    assert.equal(r.body.system_prompt, 'Line one\r\nLine two\r\n');
  });

  it('exports Markdown with YAML front matter, a file name, and every field; importing it gives an equal agent', async () => {
    const agent = (
      await app().request('POST', '/v1/agents', {
        body: agentBody({
          name: 'Round trip',
          description: '  leading spaces and trailing newline\n',
          tags: ['yes', 'no', '123', 'null'],
          capabilities: [{ ref: 'session_schedule' }, { ref: 'web_fetch', config: { timeout_ms: 2000 } }],
          client_tools: [
            { name: 'pick', description: 'Pick one', parameters: { type: 'object', properties: { choice: { enum: ['a', 'b'] } } } },
          ],
          system_prompt: '---\nnot front matter\n---\n\n\n',
        }),
      })
    ).body;
    const exp = await app().request('GET', `/v1/agents/${agent.id}/export`);
    assert.equal(exp.status, 200);
    assert.match(exp.headers.get('content-disposition') ?? '', /attachment; filename="round-trip\.md"/);
    assert.match(exp.text, /^---\nname: Round trip\n/);
    assert.ok(exp.text.endsWith('---\n\n---\nnot front matter\n---\n\n\n'));
    const back = await importRaw(exp.text);
    assert.equal(back.status, 201, back.text);
    const strip = (a: Record<string, unknown>) => ({ ...a, id: undefined, created_at: undefined, updated_at: undefined });
    assert.deepEqual(strip(back.body), strip(agent));
  });

  it('export of an unknown agent is 404', async () => {
    assert.equal((await app().request('GET', '/v1/agents/01900000-0000-7000-8000-000000000000/export')).status, 404);
  });
});
