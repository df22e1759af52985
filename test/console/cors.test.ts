import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { startTestApp } from '../helpers/app.js';
import { launchBrowser } from '../helpers/browser.js';

/** A tiny HTTP server for a page on another origin (another port of 127.0.0.1). */
async function startPageServer(t: { after(fn: () => unknown): void }): Promise<string> {
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>another origin</title><p>a page on another origin</p>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * Runs in the page: fetch() with Authorization (a preflight), a fetch() stream of the SSE
 * endpoint with Authorization and Last-Event-ID (a preflight for both headers), and an
 * EventSource with a stream token (no preflight; the answer must allow the origin).
 */
function browserChecks(args: { service: string; key: string; agentId: string; sessionId: string; firstId: string; token: string }): string {
  return `(async (a) => {
    const out = {};
    try {
      const r = await fetch(a.service + '/v1/auth/me', { headers: { Authorization: 'Bearer ' + a.key } });
      const exp = await fetch(a.service + '/v1/agents/' + a.agentId + '/export', { headers: { Authorization: 'Bearer ' + a.key } });
      out.me = { status: r.status, email: (await r.json()).user.email, disposition: exp.headers.get('Content-Disposition') };
    } catch (e) { out.me = { error: String(e) }; }
    try {
      const ctl = new AbortController();
      const r = await fetch(a.service + '/v1/sessions/' + a.sessionId + '/sse', { headers: { Authorization: 'Bearer ' + a.key, 'Last-Event-ID': a.firstId }, signal: ctl.signal });
      const reader = r.body.getReader();
      const decoder = new TextDecoder();
      let text = '';
      const deadline = Date.now() + 15000;
      while (!text.includes('event: turn.completed') && Date.now() < deadline) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      ctl.abort();
      out.stream = { status: r.status, type: r.headers.get('Content-Type'), sawTurn: text.includes('event: input.message') && text.includes('event: turn.completed'), replayedFirst: text.includes('id: ' + a.firstId) };
    } catch (e) { out.stream = { error: String(e) }; }
    out.eventSource = await new Promise((resolve) => {
      const es = new EventSource(a.service + '/v1/sessions/' + a.sessionId + '/sse?access_token=' + encodeURIComponent(a.token));
      const timer = setTimeout(() => { es.close(); resolve({ error: 'timeout' }); }, 15000);
      es.addEventListener('session.created', (m) => { clearTimeout(timer); es.close(); resolve({ type: JSON.parse(m.data).type, lastEventId: m.lastEventId }); });
      es.onerror = () => { if (es.readyState === EventSource.CLOSED) { clearTimeout(timer); resolve({ error: 'closed' }); } };
    });
    return out;
  })(${JSON.stringify(args)})`;
}

describe('CORS from a page on another origin (chromium)', () => {
  it('a listed origin calls the API with Authorization and streams events; an unlisted origin is blocked', async (t) => {
    const listed = await startPageServer(t);
    const unlisted = await startPageServer(t);
    const app = await startTestApp(t, { env: { CORS_ALLOWED_ORIGINS: listed } });
    const agent = await app.request('POST', '/v1/agents', { body: { name: 'cors', system_prompt: 'x' } });
    const session = await app.request('POST', '/v1/sessions', { body: { agent_id: agent.body.id } });
    const sessionId: string = session.body.id;
    assert.equal(
      (
        await app.request('POST', `/v1/sessions/${sessionId}/messages`, {
          body: { message: { content: [{ type: 'text', text: 'hello' }] } },
        })
      ).status,
      201,
    );
    const events = async () => (await app.request('GET', `/v1/sessions/${sessionId}/events`)).body.data as { id: string; type: string }[];
    for (let i = 0; !(await events()).some((e) => e.type === 'turn.completed'); i++) {
      assert.ok(i < 100, 'the turn completes');
      await new Promise((r) => setTimeout(r, 100));
    }
    const firstId = (await events())[0]!.id;
    const token = async () => (await app.request('POST', `/v1/sessions/${sessionId}/stream-token`)).body.token as string;

    const browser = await launchBrowser(t);
    const page = await browser.newPage();
    const run = async (origin: string) => {
      await page.goto(`${origin}/`);
      return page.evaluate(
        browserChecks({ service: app.url, key: app.adminKey, agentId: agent.body.id, sessionId, firstId, token: await token() }),
      ) as Promise<Record<string, Record<string, unknown>>>;
    };

    const allowed = await run(listed);
    assert.equal(allowed['me']!['status'], 200, JSON.stringify(allowed));
    assert.equal(allowed['me']!['email'], 'admin@localhost');
    assert.match(String(allowed['me']!['disposition']), /^attachment; filename=/, 'Content-Disposition is an exposed header');
    assert.equal(allowed['stream']!['status'], 200, JSON.stringify(allowed));
    assert.match(String(allowed['stream']!['type']), /^text\/event-stream/);
    assert.equal(allowed['stream']!['sawTurn'], true, 'the stream delivers the events after Last-Event-ID');
    assert.equal(allowed['stream']!['replayedFirst'], false, 'Last-Event-ID is honoured: the named event is not sent again');
    assert.deepEqual(allowed['eventSource'], { type: 'session.created', lastEventId: firstId });
    const preflights = app.logs.filter((l) => l.includes('"method":"OPTIONS"'));
    assert.ok(
      preflights.some((l) => l.includes('"status":204')),
      'the browser sent preflights and they were allowed',
    );

    const blocked = await run(unlisted);
    assert.match(String(blocked['me']!['error']), /TypeError: Failed to fetch/, JSON.stringify(blocked));
    assert.match(String(blocked['stream']!['error']), /TypeError: Failed to fetch/);
    assert.deepEqual(blocked['eventSource'], { error: 'closed' });
    assert.ok(
      app.logs.some((l) => l.includes('"method":"OPTIONS"') && l.includes('"status":403')),
      'the preflight of the unlisted origin was refused',
    );
  });
});
