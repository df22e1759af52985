import assert from 'node:assert/strict';
import { openSse, type SseConnection } from '../helpers/sse-client.js';
import type { TestApp } from '../helpers/app.js';

export interface StoredEvent {
  id: string;
  type: string;
  ts: string;
  session_id: string;
  sequence: number;
  context: Record<string, string>;
  data: Record<string, any>;
  metadata?: Record<string, any>;
  tags?: string[];
}

export interface AgentInput {
  system_prompt?: string;
  capabilities?: unknown[];
  client_tools?: unknown[];
  max_iterations?: number;
  default_model_id?: string;
  compaction?: Record<string, unknown>;
}

export async function createAgent(app: TestApp, input: AgentInput = {}): Promise<string> {
  const r = await app.request('POST', '/v1/agents', { body: { name: 'turn-test', system_prompt: 'You help.', ...input } });
  assert.equal(r.status, 201, r.text);
  return r.body.id;
}

/** A session on a fresh agent (the generic harness underneath). */
export async function createSession(
  app: TestApp,
  agent: AgentInput = {},
  session: Record<string, unknown> = {},
): Promise<{ id: string; agentId: string }> {
  const agentId = await createAgent(app, agent);
  const r = await app.request('POST', '/v1/sessions', { body: { agent_id: agentId, ...session } });
  assert.equal(r.status, 201, r.text);
  return { id: r.body.id, agentId };
}

export function sendMessage(app: TestApp, sessionId: string, text: string, controls?: Record<string, unknown>) {
  return app.request('POST', `/v1/sessions/${sessionId}/messages`, {
    body: { message: { content: [{ type: 'text', text }], ...(controls ? { controls } : {}) } },
  });
}

/** Every stored event of the session (the polling endpoint, paged by since_id). */
export async function listEvents(app: TestApp, sessionId: string): Promise<StoredEvent[]> {
  const out: StoredEvent[] = [];
  for (;;) {
    const since = out.at(-1)?.id;
    const r = await app.request('GET', `/v1/sessions/${sessionId}/events?limit=1000${since ? `&since_id=${since}` : ''}`);
    assert.equal(r.status, 200, r.text);
    out.push(...r.body.data);
    // `has_more`: the page stopped at the listing's byte bound before the limit.
    if (r.body.data.length < 1000 && !r.body.has_more) return out;
  }
}

/** Polls until an event of `type` (optionally the n-th) is stored, then returns all events. */
export async function waitForEvent(
  app: TestApp,
  sessionId: string,
  type: string,
  { n = 1, timeoutMs = 15_000 } = {},
): Promise<StoredEvent[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = await listEvents(app, sessionId);
    if (events.filter((e) => e.type === type).length >= n) return events;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${type} (#${n}); have: ${events.map((e) => e.type).join(', ')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** An SSE watcher of the session with helpers that parse the JSON events. */
export async function watch(app: TestApp, sessionId: string) {
  const conn: SseConnection = await openSse(`${app.url}/v1/sessions/${sessionId}/sse`, { key: app.adminKey });
  assert.equal(conn.status, 200);
  const parsed = () =>
    conn.events.filter((e) => e.event !== 'connected' && e.event !== 'disconnecting').map((e) => JSON.parse(e.data) as StoredEvent);
  return {
    conn,
    events: parsed,
    async until(type: string, n = 1, timeoutMs = 15_000): Promise<StoredEvent[]> {
      await conn.waitFor((e) => e.event === type, n, timeoutMs);
      return parsed();
    },
    close: () => conn.close(),
  };
}

/** The event types of one turn in order, with deltas collapsed to one entry per run. */
export function typesOf(events: StoredEvent[], turnId?: string): string[] {
  const out: string[] = [];
  for (const e of events) {
    if (turnId && e.context['turn_id'] !== turnId) continue;
    if ((e.type === 'output.message.delta' || e.type === 'reason.thinking.delta') && out.at(-1) === e.type) continue;
    out.push(e.type);
  }
  return out;
}

/** Sequences are 1..n without gaps and ids are unique. */
export function assertLogIntegrity(events: StoredEvent[]): void {
  for (const [i, e] of events.entries()) assert.equal(e.sequence, i + 1, `sequence gap at index ${i}: ${e.sequence}`);
  assert.equal(new Set(events.map((e) => e.id)).size, events.length, 'duplicate event ids');
}

export async function getSession(app: TestApp, sessionId: string) {
  const r = await app.request('GET', `/v1/sessions/${sessionId}`);
  assert.equal(r.status, 200, r.text);
  return r.body;
}

/**
 * Waits (bounded) until the session's row reads `status`. A turn stores its event before it changes
 * the row, so a client that reacts to the event may read the row a moment before it changes.
 */
export async function waitForStatus(app: TestApp, sessionId: string, status: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await getSession(app, sessionId)).status !== status) {
    if (Date.now() > deadline) throw new Error(`session never became ${status}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
