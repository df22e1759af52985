/**
 * The LLM call of bench/real-path in-process: CPU µs per conversation (model → tool result →
 * model, 2 streaming calls) of a `createLlmProvider` provider against the zero-latency fake
 * (bench/real-path/fake-llm.ts, its own process), C conversations at once. What the service
 * spends on the vendor call, without the rest of the turn, so changes to the provider's
 * transport and stream parsing can be compared on a busy machine:
 *
 *   node --experimental-async-context-frame --import tsx bench/real-path/llm-call-micro.ts [ROOT] [openai|anthropic] [N] [C]
 *
 * ROOT: the checkout to measure (default: this one), e.g. a worktree at an earlier commit.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const root = resolve(process.argv[2] ?? here);
const provider = (process.argv[3] ?? 'openai') as 'openai' | 'anthropic';
const n = Number(process.argv[4] ?? 2000);
const concurrency = Number(process.argv[5] ?? 25);
const { createLlmProvider } = (await import(
  `${root}/src/llm/create-llm-provider.ts`
)) as typeof import('../../src/llm/create-llm-provider.js');

const fake = spawn(
  process.execPath,
  ['--import', 'tsx', join(here, 'bench/real-path/fake-llm.ts'), JSON.stringify({ apiKey: 'k', provider })],
  {
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
const [first] = (await once(fake.stdout, 'data')) as [Buffer];
const port = (JSON.parse(first.toString().split('\n')[0]!) as { port: number }).port;
const origin = `http://127.0.0.1:${port}`;
const llm = createLlmProvider(
  provider === 'anthropic'
    ? ({ provider_type: 'anthropic', api_key: 'k', base_url: origin } as never)
    : ({ provider_type: 'openai_completions', api_key: 'k', base_url: `${origin}/v1` } as never),
);
const tools = [
  {
    name: 'get_current_time',
    description: 'The current time',
    parameters: { type: 'object', properties: { timezone: { type: 'string' } } },
  },
];
const base = { model: 'gpt-bench', system: 'You are a benchmark agent.', tools, controls: {} };

async function drain(messages: unknown[]): Promise<{ calls: { id: string; name: string; arguments: unknown }[]; text: string }> {
  const calls: { id: string; name: string; arguments: unknown }[] = [];
  let text = '';
  for await (const ev of llm.stream({ ...base, messages } as never)) {
    if (ev.type === 'tool_call') calls.push({ id: ev.id, name: ev.name, arguments: ev.arguments });
    else if (ev.type === 'text_delta') text += ev.text;
  }
  return { calls, text };
}

async function conversation(): Promise<void> {
  const user = { role: 'user', content: [{ type: 'text', text: 'What time is it?' }] };
  const first = await drain([user]);
  const call = first.calls[0];
  if (!call) throw new Error('no tool call');
  const second = await drain([
    user,
    { role: 'assistant', content: '', tool_calls: [call] },
    { role: 'tool', tool_call_id: call.id, content: '2026-11-28T00:00:00Z' },
  ]);
  if (!second.text) throw new Error('no reply');
}

async function run(count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < count) await conversation();
    }),
  );
}

await run(Math.min(400, n));
const c0 = process.cpuUsage();
const t0 = performance.now();
await run(n);
const c = process.cpuUsage(c0);
process.stdout.write(
  JSON.stringify({
    root,
    provider,
    n,
    concurrency,
    cpuUsPerConversation: Math.round((c.user + c.system) / n),
    conversationsPerS: Math.round(n / ((performance.now() - t0) / 1000)),
  }) + '\n',
);
fake.kill('SIGTERM');
process.exit(0);
