import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { request } from '../../helpers/http.js';
import { addCaller, useSuiteApp } from '../agents/helpers.js';

const SPEC_CAPABILITIES = [
  'current_time',
  'web_fetch',
  'session_file_system',
  'stateless_todo_list',
  'session_storage',
  'session_schedule',
  'session_sql_database',
  // Not in the spec's list: MCP tool servers (docs/decisions/0094-mcp-tools.md).
  'mcp',
  // Other agents as tools (docs/decisions/0102-sub-agents.md).
  'sub_agents',
];

describe('capabilities and the OpenAPI document', () => {
  const app = useSuiteApp('postgres');

  it('GET /v1/capabilities - {data,total} with the seven spec capabilities, mcp, sub_agents, and their metadata', async () => {
    const member = await addCaller(app());
    const r = await member.request('GET', '/v1/capabilities');
    assert.equal(r.status, 200);
    assert.equal(r.body.total, r.body.data.length);
    // Not paginated (spec 4.2): the whole registry; offset/limit only echo it for the earlier API's clients.
    assert.deepEqual([r.body.offset, r.body.limit], [0, r.body.total], 'no page size applies without a limit');
    assert.deepEqual(
      r.body.data.map((c: { id: string }) => c.id),
      SPEC_CAPABILITIES,
    );
    for (const c of r.body.data) {
      assert.equal(c.status, 'available');
      assert.equal(typeof c.name, 'string');
      assert.equal(typeof c.description, 'string');
      assert.equal(typeof c.system_prompt, 'string');
      assert.equal(c.config_schema.type, 'object');
      assert.ok(Array.isArray(c.features) && Array.isArray(c.dependencies));
      assert.deepEqual(c.tools, c.tool_definitions);
      for (const t of c.tools) assert.equal(t.parameters.type, 'object', `${c.id}.${t.name}`);
    }
    const byId = Object.fromEntries(r.body.data.map((c: { id: string }) => [c.id, c]));
    assert.ok(byId['current_time'].tools.some((t: { name: string }) => t.name === 'get_current_time'));
    assert.ok(byId['web_fetch'].tools.some((t: { name: string }) => t.name === 'fetch_url'));
    assert.ok('timeout_ms' in byId['web_fetch'].config_schema.properties);
    const fsConfig = Object.keys(byId['session_file_system'].config_schema.properties);
    assert.ok(fsConfig.includes('max_file_size_mb') && fsConfig.includes('max_file_size'));
    assert.ok(byId['session_file_system'].features.includes('file_system'));
  });

  it('GET /v1/capabilities/{id} - one capability; 404 for an unknown id; 401 without credentials', async () => {
    const r = await app().request('GET', '/v1/capabilities/web_fetch');
    assert.equal(r.status, 200);
    assert.equal(r.body.id, 'web_fetch');
    assert.deepEqual(r.body, (await app().request('GET', '/v1/capabilities')).body.data[1]);
    assert.deepEqual((await app().request('GET', '/v1/capabilities/teleport')).body, { error: 'Not found', status: 404 });
    assert.equal((await request(app().url, 'GET', '/v1/capabilities')).status, 401);
  });

  it('the OpenAPI document lists every agent, harness and capability endpoint with its schemas', async () => {
    const doc = (await request(app().url, 'GET', '/api-doc/openapi.json')).body;
    const result = await new Validator().validate(doc);
    assert.equal(result.valid, true, JSON.stringify(result.errors)?.slice(0, 1000));
    const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });
    const json = (op: any, status: string) => op.responses[status]?.content?.['application/json']?.schema;
    const expected: [string, string, string | null, string, string | null][] = [
      ['post', '/v1/agents', 'AgentCreate', '201', 'Agent'],
      ['get', '/v1/agents', null, '200', 'AgentList'],
      ['get', '/v1/agents/{id}', null, '200', 'Agent'],
      ['patch', '/v1/agents/{id}', 'AgentPatch', '200', 'Agent'],
      ['put', '/v1/agents/{id}', 'AgentCreate', '201', 'Agent'],
      ['delete', '/v1/agents/{id}', null, '204', null],
      ['post', '/v1/agents/{id}/copy', null, '201', 'Agent'],
      ['post', '/v1/agents/import', null, '201', 'Agent'],
      ['post', '/v1/agents/preview', 'AgentPreviewRequest', '200', 'AgentPreview'],
      ['get', '/v1/agents/{id}/export', null, '200', null],
      ['get', '/v1/harnesses', null, '200', 'HarnessList'],
      ['get', '/v1/harnesses/{id}', null, '200', 'Harness'],
      ['post', '/v1/harnesses', 'HarnessCreate', '201', 'Harness'],
      ['patch', '/v1/harnesses/{id}', 'HarnessPatch', '200', 'Harness'],
      ['delete', '/v1/harnesses/{id}', null, '204', null],
      ['get', '/v1/capabilities', null, '200', 'CapabilityList'],
      ['get', '/v1/capabilities/{id}', null, '200', 'CapabilityInfo'],
    ];
    for (const [method, path, body, status, response] of expected) {
      const op = doc.paths[path]?.[method];
      assert.ok(op, `${method} ${path} is documented`);
      if (body) assert.deepEqual(op.requestBody.content['application/json'].schema, ref(body), `${method} ${path} body`);
      assert.ok(op.responses[status], `${method} ${path} ${status}`);
      if (response) assert.deepEqual(json(op, status), ref(response), `${method} ${path} ${status} schema`);
    }
    assert.ok(doc.paths['/v1/agents/import'].post.requestBody.content['*/*'], 'import takes a raw body');
    assert.ok(doc.paths['/v1/agents/{id}/export'].get.responses['200'].content['text/markdown']);
    for (const id of [
      'Agent',
      'AgentCreate',
      'AgentPatch',
      'ClientTool',
      'CapabilityItem',
      'CapabilityRef',
      'Harness',
      'CapabilityInfo',
      'ToolSpec',
    ]) {
      assert.ok(doc.components.schemas[id], `component ${id}`);
    }
  });
});
