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

/** What the fake reads of a request: how many messages, whether the last carries a tool's result, whether tools are offered. */
interface ReadRequest {
  model: string;
  messageCount: number;
  endsWithToolResult: boolean;
  tools: boolean;
}

/** An Anthropic Messages body, parsed. */
function readMessagesBody(raw: Buffer): ReadRequest {
  const body = JSON.parse(raw.toString('utf8')) as { model: string; messages?: { content?: unknown }[]; tools?: unknown[] };
  const last = body.messages?.at(-1)?.content;
  return {
    model: body.model,
    messageCount: body.messages?.length ?? 0,
    endsWithToolResult: Array.isArray(last) && last.some((block: { type?: string }) => block.type === 'tool_result'),
    tools: (body.tools ?? []).length > 0,
  };
}

const ROLE = Buffer.from('{"role":"');
const MODEL = /"model":"([^"]*)"/;

/**
 * A Chat Completions body, read from its bytes without parsing it. At turn 1,000 of a long session
 * a request is ~390 KB: parsing it cost this process more CPU than the service spent on the turn,
 * and on two cores that contention showed in the service's own CPU figures (bench/README). The
 * service writes `model` first and every message as `{"role":…`; in a JSON text those bytes are
 * escaped, so they match only where the fields are.
 */
function readChatBody(raw: Buffer): ReadRequest {
  let messages = 0;
  let last = -1;
  for (let at = raw.indexOf(ROLE); at >= 0; at = raw.indexOf(ROLE, at + ROLE.length)) {
    messages++;
    last = at;
  }
  const role = last < 0 ? '' : raw.toString('latin1', last + ROLE.length, raw.indexOf('"', last + ROLE.length));
  return {
    model: MODEL.exec(raw.toString('latin1', 0, 512))?.[1] ?? '',
    messageCount: messages,
    endsWithToolResult: role === 'tool',
    tools: raw.includes('"tools":[{'),
  };
}

let calls = 0;
const startFake = opts.provider === 'anthropic' ? startFakeAnthropic : startFakeOpenAi;
const server = await startFake({
  api_key: opts.apiKey ?? 'bench-key',
  models: [{ id: 'gpt-bench', display_name: 'gpt-bench' }],
  parseBody: opts.provider === 'anthropic' ? readMessagesBody : readChatBody,
  respond(request) {
    calls++;
    const read = request.body as ReadRequest;
    // The service's compaction asks for a summary with no tools offered (actors/session/compaction/summarise.ts).
    const summary = !read.tools;
    if (opts.report) process.stdout.write(`{"m":${read.messageCount},"b":${request.raw.length},"s":${summary ? 1 : 0}}\n`);
    // Keep the recorded requests from growing over a soak: the bench never reads them.
    server.requests.length = 0;
    if (summary) {
      return { type: 'reply', reply: { text: SUMMARY, usage: { input_tokens: 2_000, output_tokens: 60, cache_read_tokens: 0 } } };
    }
    if (read.endsWithToolResult) {
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
