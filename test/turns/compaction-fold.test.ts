import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chooseBoundary, keepBudget } from '../../actors/session/compaction/boundary.js';
import { renderForSummary } from '../../actors/session/compaction/summarise.js';
import { randomBytes } from 'node:crypto';
import { calibrated, countTokens, estimateTokens, loadOpenAiTokenizer, requestSize } from '../../actors/session/compaction/token-count.js';
import { emptyTranscript, extendTranscript, SUMMARY_PREFIX, toLlmMessages } from '../../actors/session/log/transcript.js';
import type { SessionEvent } from '../../schemas/events.js';

let seq = 0;
const ev = (id: string, type: string, data: Record<string, unknown>) =>
  ({ id, type, data, sequence: ++seq, ts: new Date(0).toISOString(), session_id: 's', context: {} }) as unknown as SessionEvent;
const user = (id: string, text: string) =>
  ev(id, 'input.message', { message: { id, role: 'user', content: [{ type: 'text', text }], created_at: '' } });
const agent = (id: string, text: string, calls: string[] = []) =>
  ev(id, 'output.message.completed', {
    message: {
      id,
      role: 'agent',
      created_at: '',
      content: [{ type: 'text', text }, ...calls.map((c) => ({ type: 'tool_call', id: c, name: 'tool', arguments: {} }))],
    },
    metadata: {},
  });
const result = (id: string, call: string, text: string) =>
  ev(id, 'tool.completed', { tool_call_id: call, tool_name: 'tool', success: true, result: [{ type: 'text', text }] });
const usage = { input_tokens: 7, output_tokens: 3, cache_read_tokens: 0 };

describe('compaction: the transcript fold and the boundary (pure)', () => {
  const history = [
    user('u1', 'first'),
    agent('a1', 'calling', ['c1']),
    result('r1', 'c1', 'R'.repeat(5000)),
    user('u2', 'second'),
    agent('a2', 'done'),
  ];

  it('session.compacted drops the entries up to its boundary; the summary leads the next user message', async () => {
    const t = extendTranscript(emptyTranscript(), history);
    const compacted = extendTranscript(t, [
      ev('k1', 'session.compacted', { summary: 'S1', up_to_event_id: 'a1', tokens_before: 1, tokens_after: 1, reason: 'manual', usage }),
      user('u3', 'third'),
    ]);
    assert.deepEqual(
      compacted.entries.map((e) => e.event_id),
      ['u2', 'a2', 'u3'],
    );
    assert.equal(compacted.usage.input_tokens, 7, 'the summary call is counted');
    const messages = await toLlmMessages(compacted, async () => null);
    assert.deepEqual(messages[0], {
      role: 'user',
      content: [
        { type: 'text', text: `${SUMMARY_PREFIX}S1` },
        { type: 'text', text: 'second' },
      ],
    });
    assert.equal(messages.length, 3);
  });

  it('a tail that starts with a step gets the summary as its own user message first', async () => {
    const t = extendTranscript(emptyTranscript(), history);
    const c = extendTranscript(t, [
      ev('k2', 'session.compacted', { summary: 'S2', up_to_event_id: 'u2', tokens_before: 1, tokens_after: 1, reason: 'manual', usage }),
    ]);
    const messages = await toLlmMessages(c, async () => null);
    assert.equal(messages[0]!.role, 'user');
    assert.equal(messages[1]!.role, 'assistant');
  });

  it('the boundary never splits a call from its result, keeps the newest entry, and never takes an open step', () => {
    const t = extendTranscript(emptyTranscript(), history);
    const sizes = t.entries.map(() => 100);
    assert.equal(chooseBoundary({ entries: t.entries, sizes, keepTokens: 250 }), 1, 'keeps the two newest that fit');
    assert.equal(chooseBoundary({ entries: t.entries, sizes, keepTokens: 10_000 }), null, 'all fit: nothing to do');
    assert.equal(chooseBoundary({ entries: t.entries, sizes, keepTokens: 10_000 }, true), 2, 'forced: all but the newest');
    const open = extendTranscript(emptyTranscript(), [user('x1', 'q'), agent('x2', 'asks', ['c9']), user('x3', 'more')]);
    assert.equal(chooseBoundary({ entries: open.entries, sizes: [1, 1, 1], keepTokens: 0 }), 0, 'the open step stays');
  });

  it('the verbatim tail is budgeted in measured tokens: a count twice the estimate halves it', () => {
    const sizes = Array.from({ length: 100 }, () => 10); // 1,000 estimated tokens
    assert.equal(keepBudget(10_000, 30, sizes), 3_000, 'no measurement: the window share');
    assert.equal(keepBudget(10_000, 30, sizes, 800), 3_000, 'a count under the estimate never widens it');
    assert.equal(keepBudget(10_000, 30, sizes, 2_000), 1_500);
    // The session the long-session bench found: each entry measured at twice its estimate. The
    // tail kept must stay within 30 % of the window in measured tokens, not 60 %.
    const t = extendTranscript(emptyTranscript(), history);
    const even = t.entries.map(() => 100);
    const cut = chooseBoundary({ entries: t.entries, sizes: even, keepTokens: keepBudget(1_000, 30, even, 800) });
    const keptMeasured = (t.entries.length - 1 - cut!) * 200;
    assert.ok(keptMeasured <= 300, `kept ${keptMeasured} measured tokens of a 300 budget`);
  });

  it('what the summariser reads: quoted lines, large results shortened, images named', () => {
    const t = extendTranscript(emptyTranscript(), history);
    const text = renderForSummary('before', t.entries.slice(0, 2), { maxResultChars: 100, maxChars: 100_000 });
    assert.match(text, /characters omitted/);
    assert.ok(text.length < 1000);
    for (const line of text.split('\n')) assert.ok(!line.trim().startsWith('@'), 'no line reads as a directive');
  });

  it('counting: exact for OpenAI within its bound, calibrated estimate otherwise', async () => {
    assert.ok(await loadOpenAiTokenizer());
    const req = {
      system: 'You help.',
      tools: [],
      messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'hello world '.repeat(1000) }] }],
    };
    const exact = await countTokens('openai', req, 1_000_000);
    assert.ok(exact !== null && exact > 1900 && exact < 2200, `exact ${exact}`);
    // A copy: the messages counted above keep their count (below).
    const copy = { ...req, messages: req.messages.map((m) => ({ ...m })) };
    const bounded = await countTokens('openai', copy, 2048);
    assert.ok(bounded !== null && bounded !== exact && Math.abs(bounded - exact) < exact * 0.1, `bounded ${bounded}`);
    // What was counted whole is kept per message: with no budget left, the same messages still count exactly,
    // while the copy (cut by its budget, so not kept) falls back to the plain ratio.
    assert.equal(await countTokens('openai', req, 0), exact);
    assert.notEqual(await countTokens('openai', copy, 0), exact);
    // A budget that ends inside a slice: what it left uncounted is not kept as counted (the next count is whole).
    const short = () => ({
      ...req,
      messages: [
        { role: 'user' as const, content: [{ type: 'text' as const, text: 'hello world '.repeat(80) + '0123456789'.repeat(30) }] },
      ],
    });
    const cut = short();
    const whole = await countTokens('openai', short(), 1_000_000);
    assert.notEqual(await countTokens('openai', cut, 1_000), whole);
    assert.equal(await countTokens('openai', cut, 1_000_000), whole);
    assert.equal(await countTokens('anthropic', req, 1_000_000), null);
    const plain = estimateTokens(req);
    assert.equal(calibrated(plain, { estimated: 100, reported: 200 }), plain * 2);
    assert.equal(calibrated(plain, { estimated: 100, reported: 100_000 }), plain * 4, 'clamped');
  });

  it('counting: a text longer than the bound is counted on from where the last count stopped, to the whole count', async () => {
    assert.ok(await loadOpenAiTokenizer());
    const text = 'The tool returned {"time":"2026-12-01T09:00:00Z"}; '.repeat(400);
    const req = () => ({
      system: 'You help.',
      tools: [],
      messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text }] }],
    });
    const whole = await countTokens('openai', req(), 1_000_000);
    const cut = req();
    const counts: (number | null)[] = [];
    for (let i = 0; i < 12; i++) counts.push(await countTokens('openai', cut, 4_096));
    // Each request tokenises at most 4,096 new characters (whole slices kept): 20,800 take at most 11 requests.
    const exactFrom = counts.indexOf(whole);
    assert.ok(exactFrom > 0 && exactFrom <= Math.ceil(text.length / 2_048), `exact from request ${exactFrom}: ${counts.join(', ')}`);
    assert.ok(
      counts.slice(exactFrom).every((c) => c === whole),
      'and exact from then on',
    );
    assert.equal(await countTokens('openai', cut, 0), whole, 'kept: a request with no budget left counts it exactly');
  });

  it("counting: the system prompt and tools are counted once for every turn that sends them (each turn's setup builds new ones)", async () => {
    assert.ok(await loadOpenAiTokenizer());
    const setup = () => ({
      system: ['You answer questions about the fleet. ', 'Cite the manual. '.repeat(600)].join(''),
      tools: [{ name: 'lookup', description: 'Looks a part up.', parameters: { type: 'object', properties: { id: { type: 'string' } } } }],
      messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'Which part?' }] }],
    });
    const first = setup();
    const whole = await countTokens('openai', first, 1_000_000);
    const next = setup();
    assert.ok(next.tools !== first.tools && next.messages[0] !== first.messages[0], 'new objects, as a new turn has');
    // A budget of the new message's own 11 characters: the count is whole only if the prompt and tools are kept.
    assert.equal(await countTokens('openai', next, 'Which part?'.length), whole);
    const other = { ...setup(), system: `${setup().system}And be brief.` };
    assert.notEqual(await countTokens('openai', other, 'Which part?'.length), whole, 'another prompt is not taken for it');
  });

  it('the bound that spares a count is never below the exact count (English, CJK, emoji, base64, JSON)', async () => {
    assert.ok(await loadOpenAiTokenizer());
    const texts = ['hello world '.repeat(500), '上下文窗口压缩'.repeat(300), '🙂🚀👩‍💻'.repeat(200), randomBytes(3000).toString('base64')];
    for (const text of texts) {
      const req = {
        system: 'You help.',
        tools: [{ name: 'get_time', description: 'Time.', parameters: { type: 'object', properties: { tz: { type: 'string' } } } }],
        messages: [
          { role: 'user' as const, content: [{ type: 'text' as const, text }] },
          { role: 'assistant' as const, content: '', tool_calls: [{ id: 'c1', name: 'get_time', arguments: { tz: text.slice(0, 50) } }] },
        ],
      };
      const exact = (await countTokens('openai', req, 1_000_000))!;
      const { bound, estimate } = requestSize(req);
      assert.ok(bound >= exact, `bound ${bound} < exact ${exact} for ${text.slice(0, 10)}`);
      assert.equal(estimate, estimateTokens(req));
    }
  });
});
