/**
 * The history-dependent part of a long session's turn, in-process (issue 26 item 2): a session's
 * transcript grown to H messages, then T turns of model → get_current_time → model, each reason
 * step doing what the turn does with the history (fold the new events, `toLlmMessages`, the
 * request's measure and count) and the `openai_completions` provider's call against the
 * zero-latency fake (bench/real-path/fake-llm.ts, its own process). CPU µs per turn by phase, at
 * each H, so a change to the per-step walk or the request's encoding can be compared in seconds
 * instead of a 20-minute bench/long-session run:
 *
 *   node --import tsx bench/long-session/step-micro.ts [--sizes 300,2000] [--turns 200]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { countTokens, loadOpenAiTokenizer, requestSize } from '../../actors/session/compaction/token-count.js';
import { emptyTranscript, extendTranscript, toLlmMessages, type Transcript } from '../../actors/session/log/transcript.js';
import type { NewSessionEvent, SessionEvent } from '../../schemas/events.js';
import { createLlmProvider } from '../../src/llm/create-llm-provider.js';
import type { LlmToolDefinition } from '../../src/llm/index.js';
import { turnEvents, type TurnRef } from '../../src/turns/turn-events.js';

const { values: args } = parseArgs({
  options: { sizes: { type: 'string', default: '300,2000' }, turns: { type: 'string', default: '200' } },
});
const sizes = args.sizes!.split(',').map(Number);
const turns = Number(args.turns);
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

const fake = spawn(process.execPath, ['--import', 'tsx', join(root, 'bench/real-path/fake-llm.ts'), JSON.stringify({ apiKey: 'k' })], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const [first] = (await once(fake.stdout, 'data')) as [Buffer];
const port = (JSON.parse(first.toString().split('\n')[0]!) as { port: number }).port;
const llm = createLlmProvider({ provider_type: 'openai_completions', api_key: 'k', base_url: `http://127.0.0.1:${port}/v1` });
const tools: LlmToolDefinition[] = [
  {
    name: 'get_current_time',
    description: 'The current time',
    parameters: { type: 'object', properties: { timezone: { type: 'string' } } },
  },
];
const system = 'You are a benchmark agent.';
await loadOpenAiTokenizer();

const model = { model: 'gpt-bench', model_id: null, provider_id: null };
const usage = { input_tokens: 2, output_tokens: 1, cache_read_tokens: 0 };
let seq = 0;
const stamp = (events: NewSessionEvent[]): SessionEvent[] =>
  events.map((e) => ({ ...e, id: `e${++seq}`, ts: '', session_id: 's', sequence: seq, context: e.context ?? {} }));
const agent = (turn: TurnRef, text: string, calls: { id: string; name: string; arguments: Record<string, unknown> }[]) =>
  turnEvents.outputCompleted('o', turn, {
    message: {
      id: 'a',
      role: 'agent',
      content: [...(text ? [{ type: 'text', text }] : []), ...calls.map((c) => ({ type: 'tool_call', ...c }))],
      created_at: '',
    },
    model,
    usage,
  });
const timeResult = (turn: TurnRef, id: string) =>
  turnEvents.toolSucceeded('r', turn, 'x', {
    call: { id, name: 'get_current_time', arguments: { timezone: 'UTC' } },
    display_name: 'get_current_time',
    result: [
      { type: 'text', text: JSON.stringify({ utc: new Date().toISOString(), unix: 1_780_000_000, timezone: 'UTC', local: '09:12:46' }) },
    ],
    duration_ms: 1,
  });
const REPLY = 'The current time in UTC is shown above; it was read from the clock just now for you.';

const phases = { fold: 0, messages: 0, measure: 0, call: 0 };
const lap = (phase: keyof typeof phases, since: number) => {
  const now = performance.now();
  phases[phase] += now - since;
  return now;
};

/** One reason step on `t`: the walk and measure of the history, then the vendor call. */
async function step(t: Transcript): Promise<{ calls: { id: string; name: string; arguments: Record<string, unknown> }[]; text: string }> {
  let at = performance.now();
  const messages = await toLlmMessages(t, async () => null);
  at = lap('messages', at);
  const req = { system, messages, tools };
  requestSize(req);
  await countTokens('openai_completions', req, 32_768);
  at = lap('measure', at);
  const calls: { id: string; name: string; arguments: Record<string, unknown> }[] = [];
  let text = '';
  for await (const ev of llm.stream({ model: 'gpt-bench', system, messages, tools, controls: {} })) {
    if (ev.type === 'tool_call') calls.push({ id: ev.id, name: ev.name, arguments: ev.arguments });
    else if (ev.type === 'text_delta') text += ev.text;
  }
  lap('call', at);
  return { calls, text };
}

let n = 0;
/** One turn: user → step (tool call) → result → step (reply); `real`: call the vendor (else the history only grows). */
async function turn(t: Transcript, real: boolean): Promise<Transcript> {
  const ref: TurnRef = { turn_id: `t${n}`, input_message_id: `m${n}` };
  const fold = (tr: Transcript, events: NewSessionEvent[]) => {
    const at = performance.now();
    const out = extendTranscript(tr, stamp(events));
    lap('fold', at);
    return out;
  };
  const input = turnEvents.inputMessage(
    'i',
    { id: 'u', role: 'user', content: [{ type: 'text', text: `What time is it? (${n++})` }], created_at: '' },
    ref,
  );
  t = fold(t, [input]);
  const callId = `call_${n.toString(36)}`;
  const calls = real ? (await step(t)).calls : [{ id: callId, name: 'get_current_time', arguments: { timezone: 'UTC' } }];
  t = fold(t, [agent(ref, '', calls)]);
  t = fold(t, [timeResult(ref, calls[0]!.id)]);
  const text = real ? (await step(t)).text : REPLY;
  return fold(t, [agent(ref, text, [])]);
}

let t = emptyTranscript();
for (const size of sizes) {
  while ((await toLlmMessages(t, async () => null)).length < size) t = await turn(t, false);
  // Warm-up at this size, then measure; the history keeps growing by 4 messages a turn.
  for (let i = 0; i < 20; i++) t = await turn(t, true);
  for (const k of Object.keys(phases) as (keyof typeof phases)[]) phases[k] = 0;
  const c0 = process.cpuUsage();
  for (let i = 0; i < turns; i++) t = await turn(t, true);
  const c = process.cpuUsage(c0);
  const per = (ms: number) => Math.round((ms * 1000) / turns);
  process.stdout.write(
    JSON.stringify({
      messages: size,
      cpuUsPerTurn: Math.round((c.user + c.system) / turns),
      wallUsPerTurn: Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, per(v)])),
    }) + '\n',
  );
}
fake.kill('SIGTERM');
process.exit(0);
