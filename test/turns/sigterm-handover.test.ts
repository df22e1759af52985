import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestApp } from '../helpers/app.js';
import { natsServiceEnv } from '../helpers/nats-server.js';
import { assertLogIntegrity, createSession, listEvents, sendMessage, waitForEvent } from './helpers.js';
import { LOCAL_WEB_FETCH, LOCAL_WEB_FETCH_ENV, startSlowServer } from './slow-server.js';
import { spawnWorker, type LogLine, type WorkerProcess } from './worker-process.js';

/**
 * Issue 13, chaos run 3: a SIGTERMed instance's last affected turn moved on only 45 s after the
 * signal. After SIGTERM every turn of that instance either finishes on it within the shutdown
 * window or continues on another worker within about a second of its release; asserted < 5 s
 * from the signal (a CI margin; the tool below ends 2 s after it).
 */
const HANDOVER_LIMIT_MS = 5_000;
const SESSIONS_PER_KIND = 4;

const claimed = (sessionId: string) => (l: LogLine) => l.msg === 'turn claimed' && l['sessionId'] === sessionId;

for (const mode of ['nats', 'postgres'] as const)
  describe(`SIGTERM under load with two worker processes (${mode})`, () => {
    it('every turn of the stopped worker moves on within seconds: LLM streams at once, tools after they finish', async (t) => {
      const server = await startSlowServer();
      t.after(() => server.close());
      const api = await startTestApp(t, { mode, env: { ROLE: 'api', ...LOCAL_WEB_FETCH_ENV } });
      // PostgreSQL mode: the workers share the SQL turn queue (the local bus's lease and naks).
      const bus = mode === 'nats' ? natsServiceEnv(api.natsUrl!) : {};
      const env = { DATABASE_URL: api.databaseUrl!, ...bus, ...LOCAL_WEB_FETCH_ENV };
      const workers = [spawnWorker('w1', env, t), spawnWorker('w2', env, t)];
      await Promise.all(workers.map((w) => w.waitForLog((l) => l.msg === 'turn worker started', 120_000)));

      const streams: string[] = [];
      const tools: string[] = [];
      for (let i = 0; i < SESSIONS_PER_KIND; i++) {
        streams.push((await createSession(api)).id);
        tools.push((await createSession(api, { capabilities: [LOCAL_WEB_FETCH] })).id);
      }
      // Tools start a little later (after the streams are running) and end 2 s after the signal.
      for (const id of streams) assert.equal((await sendMessage(api, id, '@tokens 600 delay=25')).status, 201);
      for (const id of tools) {
        const url = `${server.url}/slow?ms=3000&id=${id}`;
        assert.equal((await sendMessage(api, id, `@tool fetch_url {"url":"${url}","format":"text"}`)).status, 201);
      }
      await Promise.all(tools.map((id) => waitForEvent(api, id, 'tool.started', { timeoutMs: 20_000 })));
      await Promise.all(streams.map((id) => waitForEvent(api, id, 'output.message.delta', { timeoutMs: 20_000 })));
      const holderOf = (id: string) => workers.find((w) => w.lines.some(claimed(id)))!;
      // The victim is the worker with the most turns (it holds at least one of each kind with 8 turns on 2 workers, or the test says so).
      const count = (w: WorkerProcess) => [...streams, ...tools].filter((id) => holderOf(id) === w).length;
      const victim = count(workers[0]!) >= count(workers[1]!) ? workers[0]! : workers[1]!;
      const survivor = workers.find((w) => w !== victim)!;
      const affected = [...streams, ...tools].filter((id) => holderOf(id) === victim);
      assert.ok(affected.length > 0);

      const termAt = Date.now();
      const exited = new Promise<number>((r) => victim.proc.once('exit', () => r(Date.now() - termAt)));
      victim.kill('SIGTERM');
      const moved = await Promise.all(
        affected.map(async (id) => {
          const kind = streams.includes(id) ? 'stream' : 'tool';
          await survivor.waitForLog(claimed(id), 30_000);
          return { id, kind, ms: Date.now() - termAt };
        }),
      );
      const exitMs = await exited;
      console.log(`# SIGTERM: victim exited after ${exitMs} ms; handover ${moved.map((m) => `${m.kind} ${m.ms} ms`).join(', ')}`);
      for (const m of moved) assert.ok(m.ms < HANDOVER_LIMIT_MS, `${m.kind} turn of session ${m.id} moved on ${m.ms} ms after SIGTERM`);

      for (const id of [...streams, ...tools]) {
        const events = await waitForEvent(api, id, 'session.idled', { timeoutMs: 30_000 });
        assertLogIntegrity(await listEvents(api, id));
        assert.equal(events.filter((e) => e.type === 'turn.completed').length, 1);
        if (tools.includes(id)) {
          const result = events.find((e) => e.type === 'tool.completed')!;
          assert.equal(result.data['success'], true, `the tool finished on the stopping worker: ${JSON.stringify(result.data)}`);
          assert.equal(server.hits.get(id), 1, 'the tool ran once');
        }
      }
    });
  });
