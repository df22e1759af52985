/**
 * The load generator of bench/turns (a separate process; run.ts spawns it):
 *
 *   node --import tsx bench/turns/client.ts '<json options>'
 *
 * Creates one agent (capability current_time) and K sessions, opens one SSE stream per session,
 * then every session slot runs turns back to back (moving to a fresh session every
 * `turnsPerSession` turns): POST a message that makes llmsim call
 * get_current_time once (zero model latency), wait for `turn.completed` on its SSE stream
 * (the overhead sample: POST sent → turn.completed received), wait for `session.idled`, repeat.
 * With `rate` > 0 the slots are paced instead: each sends a turn every `sessions / rate` seconds
 * (staggered), or at once when it is behind, so the service sees about `rate` turns/s and the
 * overhead is measured below saturation rather than as closed-loop queueing.
 * Prints one JSON report on stdout.
 */
import { readSse } from '../lib/sse-read.js';
import { runMeasuredWindow, type WindowState } from '../lib/measured-window.js';

interface ClientOptions {
  base: string;
  key: string;
  sessions: number;
  warmupS: number;
  durationS: number;
  /** One get_current_time call per turn (true) or a plain reply. */
  tool: boolean;
  /**
   * Turns per session before the slot moves on to a fresh session (0 = never). Keeps histories
   * at a realistic length: every LLM call carries the whole history, so a session with
   * thousands of zero-latency turns would measure history size, not turn overhead.
   */
  turnsPerSession: number;
  /** Turns/s offered in total, paced per slot; 0 = back to back (closed loop). */
  rate: number;
}

export interface ClientReport {
  sessions: number;
  /** Turns/s offered (paced), or 0 when every slot ran turns back to back. */
  offeredTurnsPerSec: number;
  durationS: number;
  turns: number;
  turnsPerSec: number;
  overheadMs: { p50: number; p90: number; p99: number; max: number; mean: number };
  /** POST answered 409 (the previous turn's job was not released yet) and retried. */
  busyRetries: number;
  /** Median time to create a session and open its SSE stream (rotation), in ms. */
  sessionSetupMsP50: number | null;
  errors: number;
  firstError?: string;
}

const opts = JSON.parse(process.argv[2] ?? '{}') as ClientOptions;
const auth = { authorization: `Bearer ${opts.key}`, 'content-type': 'application/json' };

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(opts.base + path, { method, headers: auth, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

/** One session's SSE stream; `next(type)` resolves on the next event of that type. */
async function openStream(sessionId: string) {
  const waiters = new Map<string, ((at: number) => void)[]>();
  const ac = new AbortController();
  const res = await fetch(`${opts.base}/v1/sessions/${sessionId}/sse?types=turn.completed&types=session.idled&types=turn.failed`, {
    headers: { authorization: auth.authorization, accept: 'text/event-stream' },
    signal: ac.signal,
  });
  if (res.status !== 200) throw new Error(`SSE ${res.status}`);
  void readSse(res, (m) => {
    const at = performance.now();
    const type = m.event === 'turn.failed' ? 'turn.completed' : (m.event ?? '');
    const list = waiters.get(type);
    const w = list?.shift();
    if (w) w(at);
    if (m.event === 'turn.failed') failures.push(m.data.slice(0, 200));
  }).catch(() => undefined); // closed
  return {
    next(type: string): Promise<number> {
      return new Promise((resolve) => {
        const list = waiters.get(type) ?? [];
        list.push(resolve);
        waiters.set(type, list);
      });
    },
    close: () => ac.abort(),
  };
}

const failures: string[] = [];

async function main(): Promise<void> {
  const agent = await call('POST', '/v1/agents', {
    name: 'bench-turns',
    system_prompt: 'You are a benchmark agent.',
    capabilities: ['current_time'],
  });
  if (agent.status !== 201) throw new Error(`agent: ${agent.status} ${JSON.stringify(agent.json)}`);
  async function newSession(): Promise<{ id: string; stream: Awaited<ReturnType<typeof openStream>> }> {
    const s = await call('POST', '/v1/sessions', { agent_id: agent.json.id });
    if (s.status !== 201) throw new Error(`session: ${s.status}`);
    return { id: s.json.id, stream: await openStream(s.json.id) };
  }
  const slots: Awaited<ReturnType<typeof newSession>>[] = [];
  for (let i = 0; i < opts.sessions; i++) slots.push(await newSession());
  const text = opts.tool ? '@tool get_current_time {"timezone":"UTC"}' : 'hello';
  const samples: number[] = [];
  const setups: number[] = [];
  let busyRetries = 0;
  let errors = 0;
  let firstError: string | undefined;
  let turns = 0;

  const periodMs = opts.rate > 0 ? (opts.sessions / opts.rate) * 1000 : 0;

  async function loop(i: number, w: WindowState): Promise<void> {
    let done = 0;
    let nextAt = performance.now() + (periodMs * i) / opts.sessions;
    while (!w.stopping) {
      if (opts.turnsPerSession > 0 && done >= opts.turnsPerSession) {
        // Set up the next conversation outside the measured path.
        const s0 = performance.now();
        const next = await newSession();
        if (w.measuring) setups.push(performance.now() - s0);
        slots[i]!.stream.close();
        slots[i] = next;
        done = 0;
        continue;
      }
      if (periodMs) {
        const wait = nextAt - performance.now();
        if (wait > 0) await new Promise((res) => setTimeout(res, wait));
        nextAt = Math.max(nextAt + periodMs, performance.now()); // behind: no burst to catch up
        if (w.stopping) break;
      }
      const { id, stream } = slots[i]!;
      const completed = stream.next('turn.completed');
      const idled = stream.next('session.idled');
      const t0 = performance.now();
      const r = await call('POST', `/v1/sessions/${id}/messages`, { message: { content: [{ type: 'text', text }] } });
      if (r.status === 409) {
        busyRetries++;
        await new Promise((res) => setTimeout(res, 2));
        continue;
      }
      if (r.status !== 201) {
        errors++;
        firstError ??= `${r.status} ${JSON.stringify(r.json)}`;
        await new Promise((res) => setTimeout(res, 100));
        continue;
      }
      const at = await completed;
      if (w.measuring) {
        samples.push(at - t0);
        turns++;
      }
      await idled;
      done++;
    }
  }

  const elapsed = await runMeasuredWindow({ warmupS: opts.warmupS, durationS: opts.durationS, drainMs: 10_000 }, (w) =>
    slots.map((_, i) => loop(i, w)),
  );
  for (const s of slots) s.stream.close();

  samples.sort((a, b) => a - b);
  const q = (p: number) => Number((samples[Math.min(samples.length - 1, Math.floor(p * samples.length))] ?? NaN).toFixed(2));
  const report: ClientReport = {
    sessions: opts.sessions,
    offeredTurnsPerSec: opts.rate,
    durationS: Number(elapsed.toFixed(2)),
    turns,
    turnsPerSec: Number((turns / elapsed).toFixed(1)),
    overheadMs: {
      p50: q(0.5),
      p90: q(0.9),
      p99: q(0.99),
      max: q(1),
      mean: Number((samples.reduce((a, b) => a + b, 0) / (samples.length || 1)).toFixed(2)),
    },
    busyRetries,
    sessionSetupMsP50: setups.length ? Number(setups.sort((a, b) => a - b)[Math.floor(setups.length / 2)]!.toFixed(1)) : null,
    errors: errors + failures.length,
    ...(firstError || failures[0] ? { firstError: firstError ?? failures[0] } : {}),
  };
  process.stdout.write(JSON.stringify(report) + '\n');
  process.exit(0);
}

main().catch((err: unknown) => {
  process.stderr.write(`client failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
