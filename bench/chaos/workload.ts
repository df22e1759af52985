import { randomUUID } from 'node:crypto';
import { readSse } from '../lib/sse-read.js';
import type { LoggedEvent, PostedTurn, RefusedPost, RequestRecord, SessionData } from './audit.js';

/**
 * The chaos workload (issue 13): N sessions, each posting turns through a random instance,
 * alternating an LLM stream (`@tokens 40 delay=50`, ~2 s) and a `fetch_url` call to the slow
 * tool server (~1 s, then a second LLM step). Each session has an SSE follower that connects to
 * a random instance other than the one it used last, reconnects every 5-20 s (and after any
 * error) with `since_id` = the last id it received, and records every id. Half the sessions
 * post the next turn the moment they see `session.idled`, the other half after a pause.
 * Every request is recorded (time, instance, status) for the audit.
 */
export interface WorkloadOptions {
  instances: { name: string; base: string }[];
  adminKey: string;
  sessions: number;
  pauseAfterIdleMs: number;
  toolUrl: string;
  /** How long a posted turn may take before the poster counts it stuck and moves on. */
  turnTimeoutMs: number;
  log: (msg: string) => void;
}

interface Follower {
  received: string[];
  lastId?: string;
  lastType?: string;
  /** The turn in progress (turn.started seen, no terminal event yet), if any. */
  openTurn: string | null;
  turnByMessage: Map<string, string>;
  idled: Set<string>;
  reconnects: number;
  close(): void;
}

export interface Workload {
  /** Sessions with a turn in progress, as their followers see it. */
  running(): string[];
  /** The type of the last event a session's follower received. */
  lastType(sessionId: string): string | undefined;
  /** Stops posting, lets turns finish (up to `drainMs`), catches the followers up and collects every log. */
  finish(
    drainMs: number,
  ): Promise<{ sessions: SessionData[]; posted: PostedTurn[]; refused: RefusedPost[]; requests: RequestRecord[]; sseReconnects: number }>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const TERMINAL = new Set(['turn.completed', 'turn.failed', 'turn.cancelled']);

export async function startWorkload(o: WorkloadOptions): Promise<Workload> {
  const requests: RequestRecord[] = [];
  const posted: PostedTurn[] = [];
  const refused: RefusedPost[] = [];
  const auth = { authorization: `Bearer ${o.adminKey}` };
  const pick = (avoid?: number) => {
    if (o.instances.length < 2) return 0;
    let i = Math.floor(Math.random() * o.instances.length);
    while (i === avoid) i = Math.floor(Math.random() * o.instances.length);
    return i;
  };

  async function call(
    inst: number,
    kind: string,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; json: any }> {
    const { name, base } = o.instances[inst]!;
    try {
      const res = await fetch(base + path, {
        method,
        headers: { ...auth, ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await res.text();
      const json = text ? JSON.parse(text) : undefined;
      // Stamped when the answer came, not when the request left: a request sent just before a
      // fault and failed by it belongs to the fault's window.
      requests.push({
        at: Date.now(),
        instance: name,
        kind,
        status: res.status,
        ...(res.status >= 500 ? { error: text.slice(0, 200) } : {}),
      });
      return { status: res.status, json };
    } catch (err) {
      requests.push({ at: Date.now(), instance: name, kind, status: 0, error: String((err as Error).cause ?? err).slice(0, 200) });
      return { status: 0, json: undefined };
    }
  }

  function follow(sessionId: string): Follower {
    let closed = false;
    let current: AbortController | null = null;
    const f: Follower = {
      received: [],
      openTurn: null,
      turnByMessage: new Map(),
      idled: new Set(),
      reconnects: -1,
      close() {
        closed = true;
        current?.abort();
      },
    };
    const onEvent = (raw: string) => {
      const e = JSON.parse(raw) as LoggedEvent;
      f.received.push(e.id);
      f.lastId = e.id;
      f.lastType = e.type;
      if (e.type === 'turn.started') {
        f.openTurn = e.data['turn_id'];
        f.turnByMessage.set(e.data['input_message_id'], e.data['turn_id']);
      }
      if (TERMINAL.has(e.type)) f.openTurn = null;
      if (e.type === 'session.idled') f.idled.add(e.data['turn_id']);
    };
    void (async () => {
      let inst: number | undefined;
      while (!closed) {
        inst = pick(inst);
        const ac = new AbortController();
        current = ac;
        f.reconnects++;
        // Reconnecting on a timer makes every follower resume with since_id many times per run.
        const cycle = setTimeout(() => ac.abort(), 5000 + Math.random() * 15_000);
        const at = Date.now();
        const { name, base } = o.instances[inst]!;
        try {
          const q = f.lastId ? `?since_id=${f.lastId}` : '';
          const res = await fetch(`${base}/v1/sessions/${sessionId}/sse${q}`, {
            headers: { ...auth, accept: 'text/event-stream' },
            signal: ac.signal,
          });
          requests.push({ at, instance: name, kind: 'sse', status: res.status });
          if (res.status !== 200) {
            await res.text().catch(() => undefined);
          } else {
            await readSse(res, (m) => {
              if (m.event !== 'connected' && m.event !== 'disconnecting' && m.data) onEvent(m.data);
            });
          }
        } catch (err) {
          // Stamped when the stream broke, not when it opened: that is when the instance failed it.
          if (!ac.signal.aborted)
            requests.push({ at: Date.now(), instance: name, kind: 'sse', status: 0, error: String(err).slice(0, 200) });
        } finally {
          clearTimeout(cycle);
        }
        if (!closed) await sleep(100);
      }
    })();
    return f;
  }

  /** Resolves true once `pred` holds (polled), false after `timeoutMs`. */
  function until(pred: () => boolean, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    return new Promise((resolve) => {
      const check = () => {
        if (pred()) return resolve(true);
        if (Date.now() > deadline) return resolve(false);
        setTimeout(check, 200);
      };
      check();
    });
  }

  // Setup: one agent, the sessions and their followers.
  const agent = await call(0, 'agents', 'POST', '/v1/agents', {
    name: 'chaos',
    system_prompt: 'You are the chaos workload agent.',
    capabilities: ['web_fetch'],
  });
  if (agent.status !== 201) throw new Error(`creating the agent: ${agent.status} ${JSON.stringify(agent.json)}`);
  const sessions: { id: string; follower: Follower; pause: boolean; withKey: boolean }[] = [];
  for (let i = 0; i < o.sessions; i++) {
    const s = await call(pick(), 'sessions', 'POST', '/v1/sessions', { agent_id: agent.json.id });
    if (s.status !== 201) throw new Error(`creating a session: ${s.status} ${JSON.stringify(s.json)}`);
    // Every fourth session's client has no Idempotency-Key: its retries are new requests.
    sessions.push({ id: s.json.id, follower: follow(s.json.id), pause: i % 2 === 1, withKey: i % 4 !== 3 });
  }
  let stopping = false;

  /**
   * Posts until answered 201, retrying 409s, 5xx and lost answers. `withKey`: every attempt
   * carries the same Idempotency-Key and body; without, each attempt is a new request, as from a
   * client that has none. `metadata.post` names the message (each attempt, without a key), so a
   * turn that a POST answered 5xx started anyway is found in the log (issue 32 item 1).
   */
  async function post(sessionId: string, text: string, name: string, withKey: boolean): Promise<string | null> {
    const key = randomUUID();
    let attempt = 0;
    /** The first attempt that got no answer or a 5xx: the retries' wait is measured from it. */
    let failedAt: number | undefined;
    while (!stopping) {
      // The key's retries must send the same body (else 422): they share one name.
      const post = withKey ? name : `${name}.${attempt++}`;
      const r = await call(
        pick(),
        'messages',
        'POST',
        `/v1/sessions/${sessionId}/messages`,
        { message: { content: [{ type: 'text', text }] }, metadata: { post } },
        { 'idempotency-key': withKey ? key : randomUUID() },
      );
      if (r.status >= 500) refused.push({ sessionId, post, at: Date.now() });
      if (r.status === 201) {
        posted.push({ sessionId, messageId: r.json.id, at: Date.now(), ...(failedAt === undefined ? {} : { retriedFrom: failedAt }) });
        return r.json.id;
      }
      // 409: the previous turn still holds the session; 5xx or no answer: retry with the same key.
      if (r.status === 0 || r.status >= 500) failedAt ??= Date.now();
      if (r.status === 409 || r.status === 0 || r.status >= 500) {
        await sleep(r.status === 409 ? 200 : 300);
        continue;
      }
      o.log(`session ${sessionId}: POST messages answered ${r.status} ${JSON.stringify(r.json).slice(0, 200)}`);
      await sleep(1000);
      return null;
    }
    return null;
  }

  async function drive(s: (typeof sessions)[number]): Promise<void> {
    for (let n = 0; !stopping; n++) {
      const text =
        n % 2 === 0 ? '@tokens 40 delay=50' : `@tool fetch_url {"url":"${o.toolUrl}/slow?ms=1000&id=${s.id}.${n}","format":"text"}`;
      const messageId = await post(s.id, text, `${s.id}.${n}`, s.withKey);
      if (!messageId) continue;
      const f = s.follower;
      const ended = await until(() => {
        const turn = f.turnByMessage.get(messageId);
        return turn !== undefined && f.idled.has(turn);
      }, o.turnTimeoutMs);
      if (!ended) o.log(`session ${s.id}: message ${messageId} not idled within ${o.turnTimeoutMs} ms`);
      if (s.pause && !stopping) await sleep(o.pauseAfterIdleMs);
    }
  }

  const drivers = sessions.map((s) => drive(s));

  async function readLog(sessionId: string): Promise<LoggedEvent[]> {
    const out: LoggedEvent[] = [];
    for (let attempt = 0; attempt < 50; ) {
      const q = out.length ? `&since_id=${out.at(-1)!.id}` : '';
      const r = await call(pick(), 'events', 'GET', `/v1/sessions/${sessionId}/events?limit=1000${q}`);
      if (r.status !== 200) {
        attempt++;
        await sleep(500);
        continue;
      }
      const page = r.json.data as LoggedEvent[];
      out.push(...page);
      if (page.length < 1000) return out;
    }
    throw new Error(`could not read the log of session ${sessionId}`);
  }

  return {
    running: () => sessions.filter((s) => s.follower.openTurn !== null).map((s) => s.id),
    lastType: (id) => sessions.find((s) => s.id === id)?.follower.lastType,
    async finish(drainMs) {
      stopping = true;
      await Promise.race([Promise.all(drivers), sleep(drainMs)]);
      const out: SessionData[] = [];
      for (const s of sessions) {
        const log = await readLog(s.id);
        const last = log.at(-1)?.id;
        // The follower may be between reconnects: give it time to receive the log's tail.
        if (last) await until(() => s.follower.received.includes(last), 20_000);
        s.follower.close();
        out.push({ id: s.id, log, sseReceived: [...s.follower.received] });
      }
      const sseReconnects = sessions.reduce((n, s) => n + s.follower.reconnects, 0);
      return { sessions: out, posted: [...posted], refused: [...refused], requests: [...requests], sseReconnects };
    },
  };
}
