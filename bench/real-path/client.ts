/**
 * The load generator of bench/real-path (a separate process; run.ts spawns it once per
 * measured point):
 *
 *   node --import tsx bench/real-path/client.ts '<json options>'
 *
 * K slots run conversations back to back, a new conversation per turn:
 *
 * - `ours` (the service): `POST /v1/sessions` (the agent has `current_time` and an
 *   `openai_completions` model as its default), open the session's SSE stream, then
 *   `POST /v1/sessions/{id}/messages`; the sample ends when `turn.completed` arrives on the stream;
 *   the stream is closed.
 * - `langgraph` (the LangGraph.js dev server): `POST /threads`, then
 *   `POST /threads/{id}/runs/stream` (`stream_mode: updates`), read until the stream ends.
 * - `mastra` (the Mastra server): `POST /api/agents/{agentId}/stream`, with a new memory thread
 *   per turn for the agent that has Memory, read until the stream ends.
 *
 * Two latencies per turn: `turn` = message POST (ours) / run POST (peer) → turn.completed / end
 * of stream; `conversation` = session / thread POST → the same end. Prints
 * `{"phase":"measure"}` when the measured window starts, `{"phase":"done"}` when it ends, then one
 * JSON report.
 */
import { readSse } from '../lib/sse-read.js';
import { runMeasuredWindow, type WindowState } from '../lib/measured-window.js';

export interface RealPathClientOptions {
  target: 'ours' | 'langgraph' | 'mastra';
  base: string;
  /** ours: the admin API key. */
  key?: string;
  /** ours: the agent every session is created with (set up by run.ts); mastra: the agent's id. */
  agentId?: string;
  sessions: number;
  warmupS: number;
  durationS: number;
}

export interface Quantiles {
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export interface RealPathClientReport {
  target: RealPathClientOptions['target'];
  sessions: number;
  durationS: number;
  turns: number;
  turnsPerSec: number;
  turnMs: Quantiles;
  conversationMs: Quantiles;
  errors: number;
  firstError?: string;
}

const opts = JSON.parse(process.argv[2] ?? '{}') as RealPathClientOptions;
const QUESTION = 'What time is it in UTC?';

class TurnError extends Error {}

async function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<any> {
  const res = await fetch(opts.base + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== 200 && res.status !== 201) throw new TurnError(`${path}: ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : undefined;
}

/** One conversation on the service: session, SSE, message, turn.completed. */
async function oursTurn(): Promise<{ turnMs: number; conversationMs: number }> {
  const auth = { authorization: `Bearer ${opts.key}` };
  const t0 = performance.now();
  const session = await post('/v1/sessions', { agent_id: opts.agentId }, auth);
  const ac = new AbortController();
  try {
    const res = await fetch(`${opts.base}/v1/sessions/${session.id}/sse?types=turn.completed&types=turn.failed`, {
      headers: { ...auth, accept: 'text/event-stream' },
      signal: ac.signal,
    });
    if (res.status !== 200) throw new TurnError(`SSE ${res.status} ${(await res.text()).slice(0, 300)}`);
    let settle!: (v: { at: number; failed?: string }) => void;
    const ended = new Promise<{ at: number; failed?: string }>((r) => (settle = r));
    readSse(res, (m) => {
      if (m.event === 'turn.completed') settle({ at: performance.now() });
      else if (m.event === 'turn.failed') settle({ at: performance.now(), failed: m.data.slice(0, 300) });
    }).then(
      () => settle({ at: performance.now(), failed: 'SSE stream ended before turn.completed' }),
      () => undefined, // aborted below
    );
    const t1 = performance.now();
    await post(`/v1/sessions/${session.id}/messages`, { message: { content: [{ type: 'text', text: QUESTION }] } }, auth);
    const end = await ended;
    if (end.failed) throw new TurnError(`turn.failed: ${end.failed}`);
    return { turnMs: end.at - t1, conversationMs: end.at - t0 };
  } finally {
    ac.abort();
  }
}

/** One conversation on the LangGraph dev server: thread, run stream read to its end. */
async function langgraphTurn(): Promise<{ turnMs: number; conversationMs: number }> {
  const t0 = performance.now();
  const thread = await post('/threads', {});
  const t1 = performance.now();
  const res = await fetch(`${opts.base}/threads/${thread.thread_id}/runs/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ assistant_id: 'agent', input: { messages: [{ role: 'user', content: QUESTION }] }, stream_mode: ['updates'] }),
  });
  if (res.status !== 200) throw new TurnError(`runs/stream ${res.status} ${(await res.text()).slice(0, 300)}`);
  let error: string | undefined;
  let updates = 0;
  await readSse(res, (m) => {
    if (m.event === 'error') error ??= m.data.slice(0, 300);
    else if (m.event === 'updates') updates++;
  });
  const end = performance.now();
  if (error) throw new TurnError(`run error: ${error}`);
  // model (tool call) → tools → model (text): three updates, or the run did not do the whole turn.
  if (updates < 3) throw new TurnError(`run ended after ${updates} updates`);
  return { turnMs: end - t1, conversationMs: end - t0 };
}

/** One conversation on the Mastra server: one stream request (its memory creates the thread), read to its end. */
async function mastraTurn(): Promise<{ turnMs: number; conversationMs: number }> {
  const t0 = performance.now();
  const res = await fetch(`${opts.base}/api/agents/${opts.agentId}/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [{ role: 'user', content: QUESTION }], memory: { thread: crypto.randomUUID(), resource: 'bench' } }),
  });
  if (res.status !== 200) throw new TurnError(`agents/stream ${res.status} ${(await res.text()).slice(0, 300)}`);
  let error: string | undefined;
  const seen = new Set<string>();
  await readSse(res, (m) => {
    if (m.data === '[DONE]') return;
    const type = (JSON.parse(m.data) as { type?: string }).type ?? '';
    seen.add(type);
    if (type === 'error') error ??= m.data.slice(0, 300);
  });
  const end = performance.now();
  if (error) throw new TurnError(`stream error: ${error}`);
  // The tool ran and the reply streamed to its finish, or the run did not do the whole turn.
  const missing = ['tool-result', 'text-delta', 'finish'].filter((t) => !seen.has(t));
  if (missing.length) throw new TurnError(`stream ended without ${missing.join(', ')}`);
  return { turnMs: end - t0, conversationMs: end - t0 };
}

function quantiles(samples: number[]): Quantiles {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p: number) => Number((s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? NaN).toFixed(1));
  return { p50: q(0.5), p90: q(0.9), p99: q(0.99), max: q(1), mean: Number((s.reduce((a, b) => a + b, 0) / (s.length || 1)).toFixed(1)) };
}

async function main(): Promise<void> {
  const oneTurn = { ours: oursTurn, langgraph: langgraphTurn, mastra: mastraTurn }[opts.target];
  const turnSamples: number[] = [];
  const convSamples: number[] = [];
  let errors = 0;
  let firstError: string | undefined;

  async function loop(w: WindowState): Promise<void> {
    while (!w.stopping) {
      try {
        const r = await oneTurn();
        // A turn counts when it ended inside the measured window (throughput = completions / window).
        if (w.measuring) {
          turnSamples.push(r.turnMs);
          convSamples.push(r.conversationMs);
        }
      } catch (err) {
        errors++;
        firstError ??= err instanceof Error ? err.message : String(err);
        await new Promise((res) => setTimeout(res, 100));
      }
    }
  }

  const elapsed = await runMeasuredWindow({ warmupS: opts.warmupS, durationS: opts.durationS, drainMs: 15_000 }, (w) =>
    Array.from({ length: opts.sessions }, () => loop(w)),
  );
  const report: RealPathClientReport = {
    target: opts.target,
    sessions: opts.sessions,
    durationS: Number(elapsed.toFixed(2)),
    turns: turnSamples.length,
    turnsPerSec: Number((turnSamples.length / elapsed).toFixed(1)),
    turnMs: quantiles(turnSamples),
    conversationMs: quantiles(convSamples),
    errors,
    ...(firstError ? { firstError } : {}),
  };
  process.stdout.write(JSON.stringify(report) + '\n');
  process.exit(0);
}

main().catch((err: unknown) => {
  process.stderr.write(`client failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
