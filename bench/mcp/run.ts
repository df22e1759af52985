/**
 * One MCP tool call per turn beside the same turn with a built-in tool (issue 27): the real path
 * of bench/real-path (a new session per turn, the service's `openai_completions` provider — the
 * official openai SDK — against the zero-latency fake, model → tool → model), once with an agent
 * whose tool is `get_current_time` and once with an agent whose tool is `bench__now` on a local
 * MCP server (official SDK, its own process, Streamable HTTP). Each K runs both variants back to
 * back; the difference in service CPU per turn is what the MCP hop costs the service.
 *
 *   node --import tsx bench/mcp/run.ts [--sessions 1,10,50] [--duration 10] [--warmup 5] [--rounds 1]
 *
 * With --rounds R each K measures both agents R times, the order alternating (built-in first in
 * odd rounds), and reports the median of the per-round differences: one pair is noise-bound.
 *
 * Embedded mode (PGlite + in-process bus): the MCP hop is the same in both modes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { apiJson } from '../lib/api-json.js';
import type { RealPathClientOptions, RealPathClientReport } from '../real-path/client.js';
import {
  SERVICE_ENTRY,
  SERVICE_NODE_FLAGS,
  buildIfStale,
  cpuDelta,
  freePort,
  onInterrupt,
  readTreeCpu,
  serviceEnv,
  spawnProcess,
  startServer,
  type Proc,
} from '../lib/process.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const ADMIN_KEY = 'bench-mcp-admin-key-0123456789abcdef';
const { values: args } = parseArgs({
  options: {
    sessions: { type: 'string', default: '1,10,50' },
    duration: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '1' },
  },
});
const log = (line: string) => process.stderr.write(`${line}\n`);
const cleanups: (() => Promise<unknown>)[] = [];
onInterrupt(async () => {
  for (const c of cleanups) await c().catch(() => undefined);
});

const json = (method: string, url: string, body: unknown) => apiJson(method, url, body, ADMIN_KEY);

async function portOf(proc: Proc): Promise<number> {
  for (let i = 0; i < 600; i++) {
    const line = proc
      .stdout()
      .split('\n')
      .find((l) => l.startsWith('{"port"'));
    if (line) return (JSON.parse(line) as { port: number }).port;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${proc.name} printed no port:\n${proc.output().slice(-2000)}`);
}

function spawn(name: string, script: string, arg?: unknown): Proc {
  const proc = spawnProcess({ name, args: ['--import', 'tsx', join(ROOT, script), ...(arg ? [JSON.stringify(arg)] : [])], cwd: ROOT });
  cleanups.unshift(() => proc.stop(5000));
  return proc;
}

/** A provider on a fake that calls `tool`, and an agent with `capabilities` on its model. */
async function agentFor(
  base: string,
  name: string,
  tool: { name: string; arguments: Record<string, unknown> },
  capabilities: unknown[],
): Promise<string> {
  const fake = spawn(`fake-${name}`, 'bench/real-path/fake-llm.ts', { apiKey: 'bench-vendor-key', provider: 'openai', tool });
  const origin = `http://127.0.0.1:${await portOf(fake)}`;
  const provider = await json('POST', `${base}/v1/llm-providers`, {
    name,
    provider_type: 'openai_completions',
    api_key: 'bench-vendor-key',
    base_url: `${origin}/v1`,
  });
  const model = await json('POST', `${base}/v1/llm-providers/${provider.id}/models`, { model_id: 'gpt-bench' });
  const agent = await json('POST', `${base}/v1/agents`, {
    name,
    system_prompt: 'You are a benchmark agent.',
    capabilities,
    default_model_id: model.id,
  });
  return agent.id as string;
}

async function measure(
  service: Proc,
  base: string,
  agentId: string,
  sessions: number,
): Promise<RealPathClientReport & { cpuMsPerTurn: number }> {
  const opts: RealPathClientOptions = {
    target: 'ours',
    base,
    key: ADMIN_KEY,
    agentId,
    sessions,
    warmupS: Number(args.warmup),
    durationS: Number(args.duration),
  };
  const client = spawnProcess({
    name: 'client',
    args: ['--import', 'tsx', join(ROOT, 'bench/real-path/client.ts'), JSON.stringify(opts)],
    cwd: ROOT,
  });
  while (!client.stdout().includes('"phase":"measure"')) await new Promise((r) => setTimeout(r, 20));
  const cpu0 = readTreeCpu(service.pid);
  while (!client.stdout().includes('"phase":"done"')) await new Promise((r) => setTimeout(r, 20));
  const cpu1 = readTreeCpu(service.pid);
  if ((await client.exited) !== 0) throw new Error(`client failed:\n${client.output().slice(-2000)}`);
  const report = JSON.parse(client.stdout().trim().split('\n').at(-1)!) as RealPathClientReport;
  return { ...report, cpuMsPerTurn: report.turns > 0 ? (cpuDelta(cpu0, cpu1) * 1000) / report.turns : Number.NaN };
}

const median = (xs: number[]): number | null => (xs.length ? xs.toSorted((a, b) => a - b)[Math.floor(xs.length / 2)]! : null);

/** A figure with `digits` decimals; a dash when the window measured none (no turn ended). */
const fixed = (v: number | null, digits: number) => (v === null || Number.isNaN(v) ? '–' : v.toFixed(digits));

async function main(): Promise<void> {
  buildIfStale(ROOT);
  const mcp = spawn('mcp-server', 'bench/mcp/mcp-server.ts');
  const mcpUrl = `http://127.0.0.1:${await portOf(mcp)}/mcp`;
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-mcp-'));
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = serviceEnv(port, dataDir, ADMIN_KEY, {
    TURN_CONCURRENCY: '200',
    LLM_PROVIDER_ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
    MCP_ALLOWED_PRIVATE_HOSTS: '127.0.0.1',
    // A new session per turn: every K and round of one service would pass the default 10,000.
    ORG_MAX_SESSIONS: '10000000',
  });
  const service = await startServer({
    name: 'service',
    args: [...SERVICE_NODE_FLAGS, join(ROOT, SERVICE_ENTRY)],
    env,
    cwd: ROOT,
    readyUrl: `${base}/health`,
    readyTimeoutMs: 120_000,
  });
  cleanups.unshift(() => service.stop(20_000));
  const builtin = await agentFor(base, 'builtin', { name: 'get_current_time', arguments: { timezone: 'UTC' } }, ['current_time']);
  const viaMcp = await agentFor(base, 'mcp', { name: 'bench__now', arguments: { timezone: 'UTC' } }, [
    { ref: 'mcp', config: { servers: [{ name: 'bench', url: mcpUrl }] } },
  ]);
  const rows: string[] = [
    '| K | round | tool | turns/s | turn p50 ms | turn p99 ms | service CPU ms/turn | errors |',
    '|---|---|---|---|---|---|---|---|',
  ];
  const deltas: string[] = [];
  const agents = { 'built-in': builtin, mcp: viaMcp } as const;
  for (const k of args.sessions.split(',').map(Number)) {
    const cpu: number[] = [];
    const p50: number[] = [];
    for (let round = 1; round <= Number(args.rounds); round++) {
      const results: Partial<Record<keyof typeof agents, Awaited<ReturnType<typeof measure>>>> = {};
      const order = round % 2 === 1 ? (['built-in', 'mcp'] as const) : (['mcp', 'built-in'] as const);
      for (const name of order) {
        log(`K=${k} round ${round} ${name}: ${args.warmup} s warm-up + ${args.duration} s`);
        const r = (results[name] = await measure(service, base, agents[name], k));
        rows.push(
          `| ${k} | ${round} | ${name} | ${fixed(r.turnsPerSec, 1)} | ${fixed(r.turnMs.p50, 1)} | ${fixed(r.turnMs.p99, 1)} | ${fixed(r.cpuMsPerTurn, 2)} | ${r.errors}${r.firstError ? ` (${r.firstError})` : ''} |`,
        );
        log(rows.at(-1)!);
      }
      const [b, m] = [results['built-in']!, results.mcp!];
      cpu.push(m.cpuMsPerTurn - b.cpuMsPerTurn);
      if (m.turnMs.p50 !== null && b.turnMs.p50 !== null) p50.push(m.turnMs.p50 - b.turnMs.p50);
    }
    deltas.push(
      `K=${k}: the MCP call adds ${fixed(median(cpu), 2)} ms service CPU and ${fixed(median(p50), 1)} ms p50 latency per turn (median of ${cpu.length}; each round: ${cpu.map((d) => d.toFixed(2)).join(', ')} ms)`,
    );
  }
  process.stdout.write(`${rows.join('\n')}\n\n${deltas.join('\n')}\n`);
}

try {
  await main();
} finally {
  for (const c of cleanups) await c().catch(() => undefined);
}
