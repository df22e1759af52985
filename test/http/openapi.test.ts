import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { openApiPath } from '../../src/http/openapi.js';
import { startTestApp } from '../helpers/app.js';
import { request } from '../helpers/http.js';

describe('GET /api-doc/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document listing exactly the registered routes', async (t) => {
    const { url, app } = await startTestApp(t, { mode: 'postgres', env: { API_PREFIX: '/agents-api' } });
    const res = await request(url, 'GET', '/api-doc/openapi.json');
    assert.equal(res.status, 200);
    const doc = res.body;
    const validator = new Validator();
    const result = await validator.validate(doc);
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2)?.slice(0, 2000));
    assert.equal(doc.openapi, '3.1.0');

    const registered = new Set(app.routes.map((r) => `${r.method.toLowerCase()} ${openApiPath(r.path, '/agents-api')}`));
    const documented = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(ops)) documented.add(`${method} ${path}`);
    }
    assert.deepEqual(
      [...registered].filter((r) => !documented.has(r)),
      [],
      'every registered route is documented',
    );
    assert.deepEqual(
      [...documented].filter((d) => !registered.has(d)),
      [],
      'every documented route exists',
    );
    assert.ok(documented.has('get /health'), 'unversioned paths carry no prefix');
    assert.ok(
      [...documented].some((d) => d.startsWith('post /agents-api/v1/sessions')),
      'versioned paths carry API_PREFIX',
    );
  });

  it('needs no credentials and every documented route answers (no 404 for a documented path)', async (t) => {
    const { url, app } = await startTestApp(t, { mode: 'postgres' });
    for (const r of app.routes.filter((r) => r.method === 'GET' && !r.path.includes(':') && !r.path.includes('*'))) {
      const res = await request(url, 'GET', r.path);
      assert.notEqual(res.status, 404, `${r.path} is routed`);
      assert.notEqual(res.status, 405, `${r.path} is routed`);
    }
  });
});
