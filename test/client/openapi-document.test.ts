import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { DOCUMENT_FILE, TYPES_FILE, generate } from '../../packages/client/scripts/generate.js';
import { startTestApp } from '../helpers/app.js';
import { request } from '../helpers/http.js';
import { REPO_ROOT } from './helpers.js';

type Json = Record<string, any>;
const run = promisify(execFile);
const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

/** `redocly lint` of a document with the repository's redocly.yaml; resolves with the exit code and output. */
async function lint(doc: unknown): Promise<{ code: number; output: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'ass-lint-'));
  try {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    const bin = join(REPO_ROOT, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
    try {
      const { stdout, stderr } = await run(process.execPath, [bin, 'lint', '--config', join(REPO_ROOT, 'redocly.yaml'), file], {
        env,
        cwd: dir,
        timeout: 120_000,
      });
      return { code: 0, output: stdout + stderr };
    } catch (err) {
      const e = err as { code: number; stdout: string; stderr: string };
      return { code: e.code, output: e.stdout + e.stderr };
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('OpenAPI document and the generated client types', () => {
  it('packages/client/openapi.json and src/generated/openapi.ts match what the service serves (npm run generate:client)', async (t) => {
    const { url } = await startTestApp(t);
    const served = (await request(url, 'GET', '/api-doc/openapi.json')).body;
    const hint = 'stale: run `npm run generate:client` and commit the result';
    assert.deepEqual(JSON.parse(readFileSync(DOCUMENT_FILE, 'utf8')), served, hint);
    const out = await generate(served);
    assert.equal(readFileSync(TYPES_FILE, 'utf8'), out.types, hint);
    assert.equal(readFileSync(DOCUMENT_FILE, 'utf8'), out.document, hint);
  });

  it('servers, security: [] on public routes, readOnly on server-set fields, an example on every operation', () => {
    const doc = JSON.parse(readFileSync(DOCUMENT_FILE, 'utf8')) as Json;
    assert.deepEqual(doc['servers'], [{ url: '/', description: 'The service that serves this document' }]);
    const withoutExample: string[] = [];
    for (const [path, ops] of Object.entries(doc['paths'] as Json)) {
      for (const method of METHODS.filter((m) => ops[m])) {
        const op = ops[method];
        const examples = [
          ...(op.parameters ?? []).map((p: Json) => p['example']),
          ...Object.values(op.requestBody?.content ?? {}).map((m: any) => m.example),
          ...Object.values(op.responses).flatMap((r: any) => Object.values(r.content ?? {}).map((m: any) => m.example)),
        ].filter((e) => e !== undefined);
        if (!examples.length) withoutExample.push(`${method} ${path}`);
        const success = Object.entries(op.responses).find(([s]) => s < '300') as [string, any] | undefined;
        const json = success?.[1].content?.['application/json'];
        if (json) assert.notEqual(json.example, undefined, `${method} ${path}: success example`);
      }
    }
    assert.deepEqual(withoutExample, []);
    for (const path of ['/health', '/api-doc/openapi.json']) assert.deepEqual(doc['paths'][path].get.security, [], path);
    assert.deepEqual(doc['paths']['/v1/auth/login'].post.security, []);
    assert.deepEqual(doc['paths']['/v1/agents'].post.security, [{ bearer: [] }]);
    const schemas = doc['components'].schemas;
    for (const f of ['id', 'status', 'created_at', 'updated_at']) assert.equal(schemas.Agent.properties[f].readOnly, true, `Agent.${f}`);
    assert.equal(schemas.Event_turn_started.properties.sequence.readOnly, true);
    assert.equal(schemas.Event.discriminator.mapping['turn.started'], '#/components/schemas/Event_turn_started');
    assert.equal(JSON.stringify(schemas.AgentCreate).includes('readOnly'), false, 'request schemas carry no readOnly');
    const post = doc['paths']['/v1/sessions/{id}/messages'].post;
    assert.deepEqual(post.requestBody.content['application/json'].example, { message: { content: [{ type: 'text', text: 'Hello!' }] } });
  });

  it('redocly lint: 0 problems; an example that breaks its schema is an error', async () => {
    const doc = JSON.parse(readFileSync(DOCUMENT_FILE, 'utf8')) as Json;
    const clean = await lint(doc);
    assert.equal(clean.code, 0, clean.output);
    assert.match(clean.output, /Your API description is valid/);
    doc['paths']['/v1/agents'].post.requestBody.content['application/json'].example = { name: 42 };
    const broken = await lint(doc);
    assert.notEqual(broken.code, 0);
    assert.match(broken.output, /no-invalid-media-type-examples/);
  });
});
