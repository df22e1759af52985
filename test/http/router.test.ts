import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createRouter, route } from '../../src/http/index.js';

const r = (method: 'GET' | 'POST', path: string) =>
  route({ method, path, auth: 'none', summary: '', tags: [], schema: { response: { 204: null } } }, async () => ({ status: 204 }));

describe('router', () => {
  const router = createRouter(
    [r('GET', '/v1/sessions/:id'), r('POST', '/v1/sessions/chat'), r('GET', '/v1/sessions/:id/fs/*path'), r('GET', '/health')],
    '/x/y',
  );

  it('prefers static segments over params', () => {
    const m = router.match('POST', '/v1/sessions/chat');
    assert.equal(m.kind, 'found');
    assert.equal(m.kind === 'found' && m.match.route.path, '/v1/sessions/chat');
  });

  it('extracts params and a catch-all rest, decoded', () => {
    const m = router.match('GET', '/v1/sessions/abc/fs/dir/a%20b.txt');
    assert.ok(m.kind === 'found');
    assert.deepEqual(m.match.params, { id: 'abc', path: 'dir/a b.txt' });
  });

  it('reports 405 with the allowed methods when only the method differs', () => {
    assert.deepEqual(router.match('DELETE', '/v1/sessions/chat'), { kind: 'method_not_allowed', allow: ['POST', 'GET'] });
  });

  it('finds routes with a param among their first two segments next to static-prefix ones, in score order', () => {
    const mixed = createRouter([
      r('GET', '/:tenant/items/:id'),
      r('GET', '/v1/items/:id'),
      r('POST', '/v1/items/new'),
      r('GET', '/v1/:kind/:id'),
      r('GET', '/v1/files/*path'),
    ]);
    const path = (method: 'GET' | 'POST', url: string) => {
      const m = mixed.match(method, url);
      return m.kind === 'found' ? m.match.route.path : m.kind;
    };
    assert.equal(path('GET', '/v1/items/7'), '/v1/items/:id');
    assert.equal(path('POST', '/v1/items/new'), '/v1/items/new');
    assert.equal(path('GET', '/acme/items/7'), '/:tenant/items/:id');
    assert.equal(path('GET', '/v1/agents/7'), '/v1/:kind/:id');
    assert.equal(path('GET', '/v1/files/7'), '/v1/:kind/:id', 'an exact route outranks a catch-all');
    assert.equal(path('GET', '/v1/files/a/b'), '/v1/files/*path');
    assert.equal(path('GET', '/v1%2Fitems/x/7'), 'not_found', 'a decoded slash in a segment matches nothing by accident');
    assert.equal(path('GET', '/acme%2Fx/items/7'), '/:tenant/items/:id', 'a decoded slash still reaches param routes');
    assert.deepEqual(mixed.match('DELETE', '/v1/items/new'), { kind: 'method_not_allowed', allow: ['POST', 'GET'] });
  });

  it('strips the API prefix before /v1 only', () => {
    assert.equal(router.match('GET', '/x/y/v1/sessions/1').kind, 'found');
    assert.equal(router.match('GET', '/x/y/health').kind, 'not_found');
    assert.equal(router.match('GET', '/health').kind, 'found');
  });

  it('rejects malformed percent-encoding as not found', () => {
    assert.equal(router.match('GET', '/v1/sessions/%E0%A4%A').kind, 'not_found');
  });
});
