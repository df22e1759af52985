import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../../src/log.js';
import { Exchange, requestIdStage } from '../../src/http/pipeline.js';

async function idFor(given?: string): Promise<string> {
  const headers: Record<string, string> = given === undefined ? {} : { 'x-request-id': given };
  const ex = new Exchange({ method: 'GET', url: '/', rawQuery: '', headers, remoteAddress: () => '' }, createLogger('silent'));
  await requestIdStage()(ex, async () => {});
  return ex.reqId;
}

test('request ids: a sane client id is kept, anything else is replaced by a fresh process-unique one', async () => {
  assert.equal(await idFor('trace-1.a:b_c'), 'trace-1.a:b_c');
  const generated = await Promise.all([idFor(), idFor('has spaces'), idFor('x'.repeat(129)), idFor('')]);
  for (const id of generated) assert.match(id, /^[0-9a-f]{12}-[0-9a-z]+$/);
  assert.equal(new Set(generated).size, generated.length, 'no two requests share a generated id');
  assert.equal(new Set(generated.map((id) => id.split('-')[0])).size, 1, 'one prefix per process');
});
