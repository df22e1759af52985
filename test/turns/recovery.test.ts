import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { natsServiceEnv } from '../helpers/nats-server.js';
import { assertLogIntegrity, createSession, listEvents, sendMessage, watch, type StoredEvent } from './helpers.js';
import { LOCAL_WEB_FETCH, LOCAL_WEB_FETCH_ENV, startSlowServer } from './slow-server.js';
import { spawnWorker, type LogLine, type WorkerProcess } from './worker-process.js';

/** Short lease so a dead worker's turn is redelivered quickly (heartbeats every third of it). */
const LEASE_MS = '3000';
/** Issue 13 item 7: a dead worker's turn runs elsewhere within 5 s; asserted with CI margin. */
const RECOVERY_LIMIT_MS = 10_000;

interface Cluster {
  api: TestApp;
  workers: WorkerProcess[];
}

/**
 * An API-only instance in this process plus two worker processes, sharing PostgreSQL and
 * nats-server. `lease` null: the service's default claim lease.
 */
async function startCluster(t: { after(fn: () => unknown): void }, lease: string | null = LEASE_MS): Promise<Cluster> {
  const leaseEnv: Record<string, string> = lease === null ? {} : { TURN_CLAIM_TIMEOUT_MS: lease };
  const api = await startTestApp(t, { mode: 'nats', env: { ROLE: 'api', ...leaseEnv, ...LOCAL_WEB_FETCH_ENV } });
  const env = { DATABASE_URL: api.databaseUrl!, ...natsServiceEnv(api.natsUrl!), ...leaseEnv, ...LOCAL_WEB_FETCH_ENV };
  const workers = [spawnWorker('w1', env, t), spawnWorker('w2', env, t)];
  await Promise.all(workers.map((w) => w.waitForLog((l) => l.msg === 'turn worker started')));
  return { api, workers };
}

const claimedBy = (sessionId: string, delivery?: number) => (l: LogLine) =>
  l.msg === 'turn claimed' && l['sessionId'] === sessionId && (delivery === undefined || l['delivery'] === delivery);

/** The worker that holds the session's first delivery, and the other one. */
async function holder(c: Cluster, sessionId: string): Promise<{ victim: WorkerProcess; survivor: WorkerProcess }> {
  const first = await Promise.any(c.workers.map((w) => w.waitForLog(claimedBy(sessionId, 1)).then(() => w)));
  return { victim: first, survivor: c.workers.find((w) => w !== first)! };
}

function assertPaired(events: StoredEvent[]): void {
  const calls = events
    .filter((e) => e.type === 'output.message.completed')
    .flatMap((e) => e.data['message'].content.filter((p: { type: string }) => p.type === 'tool_call'));
  const results = events.filter((e) => e.type === 'tool.completed').map((e) => e.data['tool_call_id']);
  assert.deepEqual(results.slice().sort(), calls.map((c: { id: string }) => c.id).sort(), 'every tool call has exactly one result');
}

describe('turn recovery with two worker processes (nats)', () => {
  it('SIGKILL during the LLM stream: the other worker finishes the turn; no duplicate ids, no gaps', async (t) => {
    const c = await startCluster(t);
    const { id } = await createSession(c.api);
    const sse = await watch(c.api, id);
    t.after(() => sse.close());
    assert.equal((await sendMessage(c.api, id, '@tokens 200 delay=20')).status, 201);
    const { victim, survivor } = await holder(c, id);
    await sse.until('output.message.delta', 3);
    victim.kill('SIGKILL');
    await survivor.waitForLog(claimedBy(id, 2), 20_000);
    const events = await sse.until('session.idled', 1, 30_000);
    assertLogIntegrity(await listEvents(c.api, id));
    assert.equal(events.filter((e) => e.type === 'turn.completed').length, 1);
    assert.equal(
      events.filter((e) => e.type === 'reason.started').length,
      1,
      'the interrupted step is redone without a second reason.started',
    );
    assert.equal(events.filter((e) => e.type === 'output.message.started').length, 2, 'the redone generation announces itself');
    const completed = events.filter((e) => e.type === 'output.message.completed');
    assert.equal(completed.length, 1);
    assert.equal(completed[0]!.data['message'].content[0].text.split(' ').length, 200);
  });

  it('SIGKILL with the default settings: the other worker resumes the turn within seconds (issue 13 item 7)', async (t) => {
    const c = await startCluster(t, null);
    const { id } = await createSession(c.api);
    const sse = await watch(c.api, id);
    t.after(() => sse.close());
    // Long enough that the turn is still streaming when the survivor takes over.
    assert.equal((await sendMessage(c.api, id, '@tokens 400 delay=25')).status, 201);
    const { victim, survivor } = await holder(c, id);
    await sse.until('output.message.delta', 3);
    const killedAt = Date.now();
    victim.kill('SIGKILL');
    await survivor.waitForLog(claimedBy(id, 2), 20_000);
    const recoveryMs = Date.now() - killedAt;
    console.log(`# recovery after SIGKILL (default lease): ${recoveryMs} ms`);
    assert.ok(recoveryMs < RECOVERY_LIMIT_MS, `turn resumed ${recoveryMs} ms after the kill`);
    const events = await sse.until('session.idled', 1, 30_000);
    assertLogIntegrity(await listEvents(c.api, id));
    assert.equal(events.filter((e) => e.type === 'turn.completed').length, 1);
    assert.equal(events.filter((e) => e.type === 'output.message.completed').length, 1, 'one worker finished the generation');
  });

  it('SIGKILL during a tool: completed tools are not re-run, the interrupted one gets an error result', async (t) => {
    const server = await startSlowServer();
    t.after(() => server.close());
    const c = await startCluster(t);
    const { id } = await createSession(c.api, { capabilities: [LOCAL_WEB_FETCH] });
    const sse = await watch(c.api, id);
    t.after(() => sse.close());
    const text = [
      `@tool fetch_url {"url":"${server.url}/slow?ms=0&id=fast"}`,
      `@tool fetch_url {"url":"${server.url}/slow?ms=20000&id=slow"}`,
    ].join('\n');
    assert.equal((await sendMessage(c.api, id, text)).status, 201);
    const { victim, survivor } = await holder(c, id);
    await sse.until('tool.completed');
    await sse.until('tool.started', 2);
    assert.equal(server.hits.get('slow'), 1);
    victim.kill('SIGKILL');
    await survivor.waitForLog(claimedBy(id, 2), 20_000);
    const events = await sse.until('session.idled', 1, 30_000);
    assertLogIntegrity(await listEvents(c.api, id));
    assert.equal(server.hits.get('fast'), 1, 'the completed tool ran once');
    assert.equal(server.hits.get('slow'), 1, 'the interrupted tool was not re-run');
    const results = events.filter((e) => e.type === 'tool.completed');
    assert.equal(results.length, 2);
    const interrupted = results.find((e) => e.data['success'] === false)!;
    assert.match(interrupted.data['error'], /interrupted/);
    assert.equal(interrupted.context['exec_id'], events.filter((e) => e.type === 'tool.started')[1]!.context['exec_id']);
    assertPaired(events);
    assert.equal(events.filter((e) => e.type === 'turn.completed').length, 1);
  });

  it('a stale worker (SIGSTOP past its lease) cannot append after another took over', async (t) => {
    const c = await startCluster(t);
    const { id } = await createSession(c.api);
    const sse = await watch(c.api, id);
    t.after(() => sse.close());
    assert.equal((await sendMessage(c.api, id, '@tokens 150 delay=20')).status, 201);
    const { victim, survivor } = await holder(c, id);
    await sse.until('output.message.delta', 2);
    victim.kill('SIGSTOP');
    await survivor.waitForLog(claimedBy(id, 2), 20_000);
    await sse.until('output.message.started', 2);
    victim.kill('SIGCONT');
    const events = await sse.until('session.idled', 1, 30_000);
    await victim.waitForLog((l) => l.msg === 'turn attempt stopped' && l['reason'] === 'stale_claim', 10_000);
    assertLogIntegrity(await listEvents(c.api, id));
    assert.equal(events.filter((e) => e.type === 'output.message.completed').length, 1);
    assert.equal(events.filter((e) => e.type === 'turn.completed').length, 1);
    assert.equal(events.filter((e) => e.type === 'session.idled').length, 1);
  });
});
