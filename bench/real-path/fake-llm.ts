/**
 * The zero-latency OpenAI-compatible server of bench/real-path (a separate process; run.ts
 * spawns it): `POST /v1/chat/completions` streams Chat Completions chunks exactly as the vendor
 * does — the wire fake of the tests (test/llm/fakes/openai.ts: role chunk, tool-call fragments
 * by `index`, a finish chunk, the usage chunk with `choices: []`, `[DONE]`, one write per SSE
 * frame). Every conversation is model → `get_current_time` → model:
 *
 * - a request whose last message is not a tool result gets a `get_current_time` call
 *   (arguments `{"timezone":"UTC"}`, streamed in 3 fragments);
 * - a request whose last message is a tool result gets a 20-token text reply.
 *
 *   node --import tsx bench/real-path/fake-llm.ts '{"port":0,"apiKey":"…"}'
 *
 * Prints `{"port":N}` once listening, then one line `{"requests":N}` on SIGTERM.
 */
import { startFakeOpenAi } from '../../test/llm/fakes/openai.js';

const opts = JSON.parse(process.argv[2] ?? '{}') as { apiKey?: string };

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

let calls = 0;
const server = await startFakeOpenAi({
  api_key: opts.apiKey ?? 'bench-key',
  models: [{ id: 'gpt-bench', display_name: 'gpt-bench' }],
  respond(request) {
    calls++;
    const messages = (request.body?.messages ?? []) as { role: string }[];
    // Keep the recorded requests from growing over a soak: the bench never reads them.
    server.requests.length = 0;
    if (messages.at(-1)?.role === 'tool') {
      return {
        type: 'reply',
        reply: { text: REPLY_TOKENS, usage: { input_tokens: 180, output_tokens: REPLY_TOKENS.length, cache_read_tokens: 0 } },
      };
    }
    return {
      type: 'reply',
      reply: {
        tool_calls: [{ id: `call_${calls.toString(36)}`, name: 'get_current_time', arguments: { timezone: 'UTC' } }],
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
