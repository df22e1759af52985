/**
 * The sending of one long-session request, in-process (issue 26 item 2, decision 0109): a Chat
 * Completions body of H messages, encoded as the provider encodes it (`chatBody`), posted through
 * the SDK to the zero-latency fake (bench/real-path/fake-llm.ts, its own process) and its reply
 * read. Alternates `bytes` (the body handed to `client.post` as bytes: fetch copies them twice)
 * with `stream` (`postStreaming`: a one-chunk stream with its length) and prints this process's
 * CPU per request and its garbage collections, per round:
 *
 *   node --import tsx bench/long-session/send-micro.ts [--messages 2000] [--requests 200] [--rounds 5]
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join, resolve } from 'node:path';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createOpenAiClient, postStreaming } from '../../src/llm/openai-client.js';
import { chatBody } from '../../src/llm/openai-completions.js';
import type { LlmMessage, LlmRequest } from '../../src/llm/types.js';

const { values: args } = parseArgs({
  options: {
    messages: { type: 'string', default: '2000' },
    requests: { type: 'string', default: '200' },
    rounds: { type: 'string', default: '5' },
  },
});
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const fake = spawn(process.execPath, ['--import', 'tsx', join(root, 'bench/real-path/fake-llm.ts'), JSON.stringify({ apiKey: 'k' })], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const [first] = (await once(fake.stdout, 'data')) as [Buffer];
const port = (JSON.parse(first.toString().split('\n')[0]!) as { port: number }).port;
const client = createOpenAiClient({ api_key: 'k', base_url: `http://127.0.0.1:${port}/v1` });

/** A history of `size` messages as the bench's turns make it: question, tool call, tool result, reply. */
const messages: LlmMessage[] = [];
for (let i = 0; messages.length < Number(args.messages); i++) {
  const id = `call_${i}`;
  messages.push({ role: 'user', content: [{ type: 'text', text: `What time is it? (${i})` }] });
  messages.push({ role: 'assistant', content: '', tool_calls: [{ id, name: 'get_current_time', arguments: { timezone: 'UTC' } }] });
  messages.push({
    role: 'tool',
    tool_call_id: id,
    name: 'get_current_time',
    content: `{"utc":"2026-11-30T15:00:00.000Z","unix":1780000000,"timezone":"UTC"}`,
  });
  messages.push({ role: 'assistant', content: 'The current time in UTC is shown above; it was read from the clock just now for you.' });
}
const req: LlmRequest = {
  model: 'gpt-bench',
  system: 'You are a benchmark agent.',
  messages,
  tools: [{ name: 'get_current_time', description: 'The current time', parameters: { type: 'object' } }],
  controls: {},
};

const gc = { major: 0, majorMs: 0, minor: 0 };
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = (e as { detail?: { kind?: number } }).detail?.kind;
    if (kind === constants.NODE_PERFORMANCE_GC_MAJOR || kind === constants.NODE_PERFORMANCE_GC_INCREMENTAL) {
      gc.major++;
      gc.majorMs += e.duration;
    } else gc.minor++;
  }
}).observe({ entryTypes: ['gc'] });

type Way = 'bytes' | 'stream';
async function send(way: Way): Promise<void> {
  const body = chatBody(req, false);
  const res =
    way === 'stream'
      ? await postStreaming(client, '/chat/completions', body)
      : await client
          .post('/chat/completions', { body: Buffer.concat(body), headers: { 'content-type': 'application/json' }, stream: true })
          .asResponse();
  await res.arrayBuffer();
}

const ways: Way[] = ['bytes', 'stream'];
const requests = Number(args.requests);
for (const way of ways) for (let i = 0; i < 30; i++) await send(way);
for (let round = 0; round < Number(args.rounds); round++) {
  for (const way of ways) {
    Object.assign(gc, { major: 0, majorMs: 0, minor: 0 });
    const c0 = process.cpuUsage();
    for (let i = 0; i < requests; i++) await send(way);
    const c = process.cpuUsage(c0);
    process.stdout.write(
      JSON.stringify({
        way,
        bytes: chatBody(req, false).length,
        cpuUsPerRequest: Math.round((c.user + c.system) / requests),
        sysUsPerRequest: Math.round(c.system / requests),
        majorGcs: gc.major,
        majorGcMs: Math.round(gc.majorMs),
        minorGcs: gc.minor,
      }) + '\n',
    );
  }
}
fake.kill('SIGTERM');
process.exit(0);
