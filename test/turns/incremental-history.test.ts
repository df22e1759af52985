import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { countTokens, loadOpenAiTokenizer, requestSize } from '../../actors/session/compaction/token-count.js';
import { emptyTranscript, extendTranscript, toLlmMessages, type Transcript } from '../../actors/session/log/transcript.js';
import type { SessionEvent } from '../../schemas/events.js';
import { perMessageList, type LlmMessage, type LlmToolDefinition, type LlmUserPart } from '../../src/llm/index.js';
import { chatBody, toChatParams } from '../../src/llm/openai-completions.js';
import { responsesBody, toResponsesParams } from '../../src/llm/openai-responses.js';

/*
 * A step of a long session builds its history, measure and vendor mapping from the last step's
 * (issue 26: only what is new is visited). Whatever order the events come in, the result must be
 * what a fold of the whole log from scratch gives.
 */
let seq = 0;
const ev = (id: string, type: string, data: Record<string, unknown>) =>
  ({ id, type, data, sequence: ++seq, ts: new Date(0).toISOString(), session_id: 's', context: {} }) as unknown as SessionEvent;
const user = (id: string, text: string, image = false) =>
  ev(id, 'input.message', {
    message: {
      id,
      role: 'user',
      content: [{ type: 'text', text }, ...(image ? [{ type: 'image_file', image_id: 'img1' }] : [])],
      created_at: '',
    },
  });
const agent = (id: string, text: string, calls: string[] = [], extra: Record<string, unknown> = {}) =>
  ev(id, 'output.message.completed', {
    message: {
      id,
      role: 'agent',
      created_at: '',
      content: [{ type: 'text', text }, ...calls.map((c) => ({ type: 'tool_call', id: c, name: 'tool', arguments: { q: `ü "${c}"\n` } }))],
    },
    metadata: {},
    ...extra,
  });
const result = (id: string, call: string, text: string) =>
  ev(id, 'tool.completed', { tool_call_id: call, tool_name: 'tool', success: true, result: [{ type: 'text', text }] });
const compacted = (id: string, upTo: string, summary: string) =>
  ev(id, 'session.compacted', {
    summary,
    up_to_event_id: upTo,
    tokens_before: 1,
    tokens_after: 1,
    reason: 'threshold',
    usage: { input_tokens: 1, output_tokens: 1, cache_read_tokens: 0 },
  });

/** A log that replaces entries (results arriving late, after a cancel note), compacts twice and has a repair note and an image. */
const log: SessionEvent[] = [
  user('u1', 'first'),
  agent('a1', 'calling two', ['c1', 'c2']),
  result('r2', 'c2', 'second result'),
  user('u2', 'User requested to cancel the work.'),
  result('r1', 'c1', 'late "first" result \u0000\u001f\ud83d\ude00'),
  agent('a2', '{"not":"valid"}', [], { structured_output_errors: ['missing x'] }),
  agent('a3', '{"x":1}'),
  user('u3', 'third'),
  agent('a4', 'calling', ['c3']),
  result('r3', 'c3', 'R'.repeat(3000)),
  agent('a5', 'done'),
  compacted('k1', 'a2', 'S1'),
  user('u4', 'fourth'),
  agent('a6', 'calling', ['c4']),
  result('r4', 'c4', 'four'),
  agent('a7', 'done four'),
  compacted('k2', 'a6', 'S2'),
  user('u5', 'with a picture', true),
  agent('a8', 'seen'),
  user('u6', 'sixth'),
  agent('a9', 'calling', ['c5']),
  result('r5', 'c5', 'five'),
];
const image: LlmUserPart = { type: 'image', media_type: 'image/png', data_base64: 'iVBORw0KGgo=' };
const resolve = async () => image;
const tools: LlmToolDefinition[] = [{ name: 'tool', description: 'A tool', parameters: { type: 'object', properties: {} } }];

/** The transcript after each event, folded one event at a time with the history read between folds. */
async function stepwise(each: (t: Transcript, upTo: number, messages: LlmMessage[]) => Promise<void>): Promise<void> {
  let t = emptyTranscript();
  for (let i = 0; i < log.length; i++) {
    t = extendTranscript(t, [log[i]!]);
    await each(t, i + 1, await toLlmMessages(t, resolve));
  }
}

const fromScratch = (upTo: number) => toLlmMessages(extendTranscript(emptyTranscript(), log.slice(0, upTo)), resolve);

describe('incremental history (issue 26)', () => {
  before(async () => assert.equal(await loadOpenAiTokenizer(), true));

  it('a transcript extended event by event gives the messages of a fold from scratch; earlier lists stay as they were', async () => {
    const earlier: { list: LlmMessage[]; copy: LlmMessage[] }[] = [];
    await stepwise(async (t, upTo, messages) => {
      assert.deepEqual(messages, await fromScratch(upTo), `after event ${upTo}`);
      assert.deepEqual(await toLlmMessages(t, resolve), messages, 'read again');
      earlier.push({ list: messages, copy: structuredClone(messages) });
    });
    for (const { list, copy } of earlier) assert.deepEqual(list, copy);
  });

  it('a folded history read only every few events still matches (the lineage skips unread transcripts)', async () => {
    let t = emptyTranscript();
    for (let i = 0; i < log.length; i++) {
      t = extendTranscript(t, [log[i]!]);
      if (i % 3 === 2) assert.deepEqual(await toLlmMessages(t, resolve), await fromScratch(i + 1), `after event ${i + 1}`);
    }
  });

  it('the measure and count of a derived list equal those of the full walk (same messages) and of new objects', async () => {
    let prompts = 0;
    await stepwise(async (_t, upTo, messages) => {
      const req = (m: LlmMessage[]) => ({ system: 'You are terse.', messages: m, tools });
      const size = requestSize(req(messages));
      assert.deepEqual(size, requestSize(req([...messages])), `size after event ${upTo}`);
      assert.deepEqual(size, requestSize(req(structuredClone(messages))), `size (new objects) after event ${upTo}`);
      // A budget the fixed part (a prompt not counted before; the fixed part is kept by content)
      // exhausts: the messages counted before add up exactly, the rest is estimated at the measured
      // ratio, and nothing new is kept. Four digits are two tokens whatever they are.
      const unseen = (m: LlmMessage[]) => ({ ...req(m), system: `You are terse. #${1000 + ++prompts}` });
      const short = await countTokens('openai_completions', unseen(messages), 40);
      const walked = await countTokens('openai_completions', unseen([...messages]), 40);
      assert.equal(short, walked, `count (40) after event ${upTo}`);
      const whole = await countTokens('openai_completions', req(messages), 32_768);
      assert.equal(whole, await countTokens('openai_completions', req([...messages]), 32_768), `count after event ${upTo}`);
      assert.equal(
        whole,
        await countTokens('openai_completions', req(structuredClone(messages)), 32_768),
        `count (new objects) after ${upTo}`,
      );
    });
  });

  it('the Chat Completions and Responses bodies of a derived list (kept encodings) equal those of new objects', async () => {
    await stepwise(async (_t, upTo, messages) => {
      const request = (m: LlmMessage[]) => ({ model: 'm', system: 'You are terse.', messages: m, tools, controls: {} });
      const fresh = () => request(structuredClone(messages));
      assert.equal(chatBody(request(messages), true).toString(), JSON.stringify(toChatParams(fresh(), true)), `chat after ${upTo}`);
      assert.equal(responsesBody(request(messages)).toString(), JSON.stringify(toResponsesParams(fresh())), `responses after ${upTo}`);
    });
  });
});

describe('incremental history: what a step visits (issue 26)', () => {
  const turn = (n: number) => [
    user(`u${n}`, `question ${n}`),
    agent(`a${n}`, '', [`c${n}`]),
    result(`r${n}`, `c${n}`, `time ${n}`),
    agent(`b${n}`, 'answer'),
  ];

  /** Runs 30 turns event by event; `view` folds the next event and gives the transcript a step reads. */
  async function visits(view: (event: SessionEvent) => Transcript): Promise<void> {
    let visited = 0;
    const visit = perMessageList((m) => {
      visited++;
      return m;
    });
    const all: SessionEvent[] = [];
    for (let n = 0; n < 30; n++) {
      for (const event of turn(n)) {
        all.push(event);
        visited = 0;
        const messages = await toLlmMessages(view(event), resolve);
        visit(messages);
        if (n > 2) assert.ok(visited <= 4, `turn ${n}, ${event.id}: ${visited} messages visited of ${messages.length}`);
        assert.deepEqual(messages, await toLlmMessages(extendTranscript(emptyTranscript(), all), resolve));
      }
    }
  }

  it('one fold extended step by step: a step visits its new messages only', async () => {
    let t = emptyTranscript();
    await visits((event) => (t = extendTranscript(t, [event])));
  });

  it("the turn log's view of its stored fold (stored events come back as new objects): new messages only", async () => {
    // The view = the stored fold + the queued event; once stored, the event is folded (as a new
    // object) into the stored fold, from which the next view is folded.
    let stored = emptyTranscript();
    let queued: SessionEvent | null = null;
    await visits((event) => {
      if (queued) stored = extendTranscript(stored, [structuredClone(queued)]);
      queued = event;
      return extendTranscript(stored, [event]);
    });
  });
});
