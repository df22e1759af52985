import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentBody, useSuiteApp } from '../agents/helpers.js';
import { createSession, runTools, upload } from './helpers.js';

const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5b1d3e70000000049454e44ae426082',
  'hex',
);
const SANDBOX_CSP = "default-src 'none'; sandbox";

describe('stored tenant content is served so that a browser never runs it on the API origin', () => {
  const suiteApp = useSuiteApp();

  it('an uploaded HTML, SVG, XHTML or JavaScript file downloads with nosniff and a sandbox CSP', async () => {
    const app = suiteApp();
    const sessionId = await createSession(app);
    const pages: [string, string, string][] = [
      ['page.html', 'text/html; charset=utf-8', '<script>fetch("/v1/agents")</script>'],
      ['pic.svg', 'image/svg+xml', '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'],
      ['doc.xhtml', 'application/xhtml+xml', '<html xmlns="http://www.w3.org/1999/xhtml"/>'],
      ['run.js', 'text/javascript', 'alert(1)'],
      ['odd name "ä".html', 'TEXT/HTML', '<b>x</b>'],
    ];
    for (const [name, type, body] of pages) {
      assert.equal((await upload(app, sessionId, `/${name}`, body, type)).status, 201);
      const got = await app.request('GET', `/v1/sessions/${sessionId}/fs/${encodeURIComponent(name)}`);
      assert.equal(got.status, 200, name);
      assert.equal(got.text, body, name);
      assert.equal(got.headers.get('x-content-type-options'), 'nosniff', name);
      assert.equal(got.headers.get('content-security-policy'), SANDBOX_CSP, name);
      assert.match(got.headers.get('content-disposition') ?? '', /^attachment; filename="[^"]*"; filename\*=UTF-8''/, name);
    }
    const odd = await app.request('GET', `/v1/sessions/${sessionId}/fs/${encodeURIComponent('odd name "ä".html')}`);
    assert.equal(
      odd.headers.get('content-disposition'),
      `attachment; filename="odd name ___.html"; filename*=UTF-8''odd%20name%20%22%C3%A4%22.html`,
    );
  });

  it('a file a tool wrote as .html is served the same way; plain text renders inline but still without sniffing', async () => {
    const app = suiteApp();
    const sessionId = await createSession(app);
    const [w] = await runTools(app, sessionId, [['write_file', { path: '/report.html', content: '<img src=x onerror=alert(1)>' }]]);
    assert.ok(w!.success, w!.error);
    const html = await app.request('GET', `/v1/sessions/${sessionId}/fs/report.html`);
    assert.match(html.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal(html.headers.get('content-disposition'), `attachment; filename="report.html"; filename*=UTF-8''report.html`);
    assert.equal(html.headers.get('content-security-policy'), SANDBOX_CSP);

    assert.equal((await upload(app, sessionId, '/notes.txt', '<script>alert(1)</script>', 'text/plain')).status, 201);
    const text = await app.request('GET', `/v1/sessions/${sessionId}/fs/notes.txt`);
    assert.equal(text.headers.get('content-disposition'), null, 'passive types stay viewable');
    assert.equal(text.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(text.headers.get('content-security-policy'), SANDBOX_CSP);
  });

  it('images and agent exports carry nosniff and the sandbox CSP; JSON replies carry nosniff', async () => {
    const app = suiteApp();
    const sessionId = await createSession(app, ['current_time']);
    const fd = new FormData();
    fd.append('session_id', sessionId);
    fd.append('file', new Blob([PNG], { type: 'image/png' }), 'dot.png');
    const up = await fetch(`${app.url}/v1/images`, { method: 'POST', body: fd, headers: { authorization: `Bearer ${app.adminKey}` } });
    assert.equal(up.status, 201);
    assert.equal(up.headers.get('x-content-type-options'), 'nosniff');
    const image = await app.request('GET', `/v1/images/${((await up.json()) as { id: string }).id}`);
    assert.equal(image.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(image.headers.get('content-security-policy'), SANDBOX_CSP);
    assert.equal(image.headers.get('content-disposition'), null);

    const agent = await app.request('POST', '/v1/agents', { body: agentBody({ system_prompt: '<script>alert(1)</script>' }) });
    assert.equal(agent.status, 201, agent.text);
    assert.equal(agent.headers.get('x-content-type-options'), 'nosniff');
    const exported = await app.request('GET', `/v1/agents/${agent.body.id}/export`);
    assert.equal(exported.status, 200);
    assert.equal(exported.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(exported.headers.get('content-security-policy'), SANDBOX_CSP);
    assert.match(exported.headers.get('content-disposition') ?? '', /^attachment; filename=/);
    const missing = await app.request('GET', `/v1/sessions/${sessionId}/fs/nothing-here.html`);
    assert.equal(missing.status, 404);
    assert.equal(missing.headers.get('x-content-type-options'), 'nosniff', 'errors too');
  });
});
