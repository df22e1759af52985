/** bench/long-session's client side: a session with its SSE stream open, one turn at a time. */
import type { EventSourceMessage } from 'eventsource-parser';
import { apiJson } from '../lib/api-json.js';
import { readSse } from '../lib/sse-read.js';
import { ADMIN_KEY, type Service } from './service.js';

const log = (msg: string) => process.stderr.write(msg + '\n');

/** Characters of one padding message: under compaction's exact-count budget (32,768), so each is counted once and kept. */
const PADDING_CHARS = 30_000;

/**
 * About `bytes` of text in messages of PADDING_CHARS (`--pad-young`), worded like the history they
 * stand in for (questions with numbers, the tool's JSON result), so the tokenizer counts them at a
 * like ratio and the request stays under compaction's limit as an old session's does.
 */
export function paddingMessages(bytes: number): string[] {
  const messages: string[] = [];
  let text = '';
  for (let i = 1, size = 0; size < bytes; i++) {
    const line = `Question ${i}: what time is it? The tool get_current_time returned {"time":"2026-12-01T09:${String(i % 60).padStart(2, '0')}:00Z"}; the answer was given.\n`;
    size += line.length;
    if (text.length + line.length > PADDING_CHARS) {
      messages.push(text);
      text = '';
    }
    text += line;
  }
  if (text) messages.push(text);
  return messages;
}

/**
 * A session with its SSE stream open; `turn()` sends one message and waits for its
 * `session.idled`. `padding`: the texts of its first turns, instead of the question.
 */
export async function openSession(s: Service, padding: readonly string[] = []) {
  const auth = { authorization: `Bearer ${ADMIN_KEY}` };
  const session = await apiJson('POST', `${s.base}/v1/sessions`, { agent_id: s.agentId }, ADMIN_KEY);
  const ac = new AbortController();
  let waiting: (() => void) | null = null;
  let failures = 0;
  let lastEventId: string | undefined;
  const onEvent = (m: EventSourceMessage) => {
    if (m.id) lastEventId = m.id;
    if (m.event === 'session.idled') waiting?.();
    else if (m.event === 'turn.failed') {
      failures++;
      log(`turn.failed: ${JSON.stringify(JSON.parse(m.data).data).slice(0, 400)}`);
    }
  };
  // The service closes every stream after ~5 min (SSE_CYCLE_MS): a run longer than that reconnects
  // from the last event seen, as any client does, so no session.idled is missed.
  const connect = async () => {
    const res = await fetch(`${s.base}/v1/sessions/${session.id}/sse?types=session.idled&types=turn.failed`, {
      headers: { ...auth, accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
      signal: ac.signal,
    });
    if (res.status !== 200) throw new Error(`SSE ${res.status}`);
    return res;
  };
  const follow = async (res: Response) => {
    for (;;) {
      await readSse(res, onEvent).catch(() => undefined);
      if (ac.signal.aborted) return;
      res = await connect();
    }
  };
  void follow(await connect()).catch((err) => ac.signal.aborted || log(`SSE of ${session.id} lost: ${err}`));
  return {
    async turn(i: number): Promise<number> {
      const idled = new Promise<void>((r) => (waiting = r));
      const t0 = performance.now();
      await apiJson(
        'POST',
        `${s.base}/v1/sessions/${session.id}/messages`,
        { message: { content: [{ type: 'text', text: padding[i - 1] ?? `What time is it? (${i})` }] } },
        ADMIN_KEY,
      );
      await idled;
      waiting = null;
      return performance.now() - t0;
    },
    /** Turns that ended in turn.failed (an LLM timeout on an overloaded machine): counted, not fatal. */
    get failures() {
      return failures;
    },
    close: () => ac.abort(),
  };
}

export type Session = Awaited<ReturnType<typeof openSession>>;
