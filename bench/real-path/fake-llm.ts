/**
 * The zero-latency vendor server of bench/real-path (a separate process; run.ts spawns it),
 * streaming exactly as the vendor does through the wire fakes of the tests:
 * - `openai` (default): `POST /v1/chat/completions`, Chat Completions chunks
 *   (test/llm/fakes/openai.ts: role chunk, tool-call fragments by `index`, a finish chunk, the
 *   usage chunk with `choices: []`, `[DONE]`, one write per SSE frame);
 * - `anthropic`: `POST /v1/messages`, Messages events (test/llm/fakes/anthropic.ts:
 *   message_start, content blocks with `input_json_delta` / `text_delta`, message_delta with
 *   usage, message_stop).
 *
 * Every conversation is model → `get_current_time` → model:
 * - a request whose last message is not a tool result gets a `get_current_time` call
 *   (arguments `{"timezone":"UTC"}`, streamed in 3 fragments);
 * - a request whose last message is a tool result gets a 20-token text reply.
 *
 *   node --import tsx bench/real-path/fake-llm.ts '{"apiKey":"…","provider":"openai"|"anthropic"}'
 *
 * Prints `{"port":N}` once listening, then one line `{"requests":N}` on SIGTERM.
 */
import { startFakeAnthropic } from '../../test/llm/fakes/anthropic.js';
import type { RecordedRequest } from '../../test/llm/fakes/fake-server.js';
import { startFakeOpenAi } from '../../test/llm/fakes/openai.js';

const opts = JSON.parse(process.argv[2] ?? '{}') as {
  apiKey?: string;
  provider?: 'openai' | 'anthropic';
  /** The tool every conversation calls (bench/mcp: an MCP tool); default `get_current_time` `{"timezone":"UTC"}`. */
  tool?: { name: string; arguments: Record<string, unknown> };
  /** One line per request, `{"m":messages,"b":bytes}`: the history each request carried (bench/long-session). */
  report?: boolean;
};
const tool = opts.tool ?? { name: 'get_current_time', arguments: { timezone: 'UTC' } };

/** The reply after the tool result: 20 tokens, as a vendor streams them (one chunk per token). */
export const REPLY_TOKENS = [
  'The',
  ' current',
  ' time',
  ' in',
  ' UTC',
  ' is',
  ' shown',
  ' above',
  ';',
  ' it',
  ' was',
  ' read',
  ' from',
  ' the',
  ' clock',
  ' just',
  ' now',
  ' for',
  ' you',
  '.',
];

const SUMMARY = (
  'Summary of the conversation so far: the user asked for the current time many times; each time the assistant ' +
  'called get_current_time and answered with the time it returned. No other task is open.'
).split(/(?= )/);

/** Whether the request's last message carries a tool's result, as each vendor words it. */
function endsWithToolResult(request: RecordedRequest): boolean {
  const last = ((request.body?.messages ?? []) as { role: string; content?: unknown }[]).at(-1);
  if (opts.provider === 'anthropic') {
    return Array.isArray(last?.content) && last.content.some((block: { type?: string }) => block.type === 'tool_result');
  }
  return last?.role === 'tool';
}

let calls = 0;
const startFake = opts.provider === 'anthropic' ? startFakeAnthropic : startFakeOpenAi;
const server = await startFake({
  api_key: opts.apiKey ?? 'bench-key',
  models: [{ id: 'gpt-bench', display_name: 'gpt-bench' }],
  respond(request) {
    calls++;
    // The service's compaction asks for a summary with no tools offered (actors/session/compaction/summarise.ts).
    const summary = ((request.body?.tools ?? []) as unknown[]).length === 0;
    if (opts.report) {
      const m = ((request.body?.messages ?? []) as unknown[]).length;
      process.stdout.write(`{"m":${m},"b":${request.raw.length},"s":${summary ? 1 : 0}}\n`);
    }
    // Keep the recorded requests from growing over a soak: the bench never reads them.
    server.requests.length = 0;
    if (summary) {
      return { type: 'reply', reply: { text: SUMMARY, usage: { input_tokens: 2_000, output_tokens: 60, cache_read_tokens: 0 } } };
    }
    if (endsWithToolResult(request)) {
      return {
        type: 'reply',
        reply: { text: REPLY_TOKENS, usage: { input_tokens: 180, output_tokens: REPLY_TOKENS.length, cache_read_tokens: 0 } },
      };
    }
    return {
      type: 'reply',
      reply: {
        tool_calls: [{ id: `call_${calls.toString(36)}`, name: tool.name, arguments: tool.arguments }],
        usage: { input_tokens: 150, output_tokens: 12, cache_read_tokens: 0 },
      },
    };
  },
});
process.stdout.write(JSON.stringify({ port: Number(new URL(server.origin).port) }) + '\n');
process.once('SIGTERM', () => {
  process.stdout.write(JSON.stringify({ requests: calls }) + '\n');
  void server.close().then(() => process.exit(0));
});
