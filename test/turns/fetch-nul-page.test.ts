import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { assertLogIntegrity, createSession, getSession, listEvents, sendMessage } from './helpers.js';
import { LOCAL_WEB_FETCH, LOCAL_WEB_FETCH_ENV } from './slow-server.js';

/**
 * A page of 1 MiB of NUL bytes served as text/html went through the HTML converter and into the
 * session's events as a megabyte of text per call: 14 s and +962 MB RSS for one, /health at
 * 4.96 s for four at once (issue 30). It is binary content: the turn takes about as long as any
 * small fetch, the process barely grows, and /health answers at once throughout.
 */
const MiB = 1024 * 1024;
const PAGES = 4;

async function startNulServer(t: { after(fn: () => unknown): void }): Promise<string> {
  const server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(Buffer.alloc(MiB, 0)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Probes /health every 50 ms until `stop()`; the slowest answer, in ms. */
function probeHealth(app: TestApp) {
  let stopped = false;
  let worst = 0;
  const probing = (async () => {
    while (!stopped) {
      const started = Date.now();
      assert.equal((await app.request('GET', '/health')).status, 200);
      worst = Math.max(worst, Date.now() - started);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await probing;
      return worst;
    },
  };
}

for (const mode of ['pglite', 'postgres'] as const) {
  describe(`turns: fetch_url of 1 MiB of NUL bytes (${mode})`, () => {
    it(`${PAGES} such pages at once: binary content, the turn completes fast, bounded memory, /health fast`, async (t) => {
      const url = await startNulServer(t);
      const app = await startTestApp(t, { mode, env: LOCAL_WEB_FETCH_ENV });
      const { id } = await createSession(app, { capabilities: [LOCAL_WEB_FETCH] });
      // A warm-up turn loads the parse pool and the tool path, so what follows measures the pages only.
      assert.equal((await sendMessage(app, id, 'warm up')).status, 201);
      while ((await getSession(app, id)).status !== 'idle') await new Promise((r) => setTimeout(r, 50));

      const rss0 = process.memoryUsage.rss();
      let peak = rss0;
      const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20);
      t.after(() => clearInterval(sampler));
      const health = probeHealth(app);
      const started = Date.now();
      const lines = Array.from({ length: PAGES }, (_, i) => `@tool fetch_url {"url":"${url}/page${i}"}`);
      assert.equal((await sendMessage(app, id, lines.join('\n'))).status, 201);
      while ((await getSession(app, id)).status !== 'idle') {
        assert.ok(Date.now() - started < 30_000, 'the turn did not end within 30 s');
        await new Promise((r) => setTimeout(r, 50));
      }
      const tookMs = Date.now() - started;
      const worstHealthMs = await health.stop();
      clearInterval(sampler);
      const grewMb = Math.round((peak - rss0) / MiB);
      t.diagnostic(`turn ${tookMs} ms, RSS +${grewMb} MB, slowest /health ${worstHealthMs} ms`);

      const events = await listEvents(app, id);
      const results = events.filter((e) => e.type === 'tool.completed');
      assert.equal(results.length, PAGES);
      for (const r of results) {
        assert.equal(r.data['success'], true, r.data['error']);
        const [head, body] = r.data['result'] as { text: string }[];
        assert.equal(JSON.parse(head!.text).kind, 'binary');
        assert.equal(body!.text, 'Binary content; not shown.');
      }
      assert.equal(events.at(-2)!.type, 'turn.completed');
      assertLogIntegrity(events);
      // Before, on a loaded two-core test machine: postgres 27 s, +225 MB, /health 9.1 s; pglite
      // past 30 s. After: postgres 0.5-0.8 s, +3 MB, 90-140 ms; pglite 1.7-2.8 s, +14-21 MB, 0.5-0.9 s.
      assert.ok(tookMs < 10_000, `the turn took ${tookMs} ms`);
      assert.ok(grewMb < 100, `RSS grew ${grewMb} MB`);
      assert.ok(worstHealthMs < 2_000, `/health took ${worstHealthMs} ms`);
    });
  });
}
