/**
 * The processes of bench/long-session: the zero-latency OpenAI fake of bench/real-path (with
 * `report`: one line per request naming the history it carried) and the service in embedded or
 * NATS mode, set up like bench/real-path's (openai_completions provider → the fake, an agent with
 * `current_time`), so every turn is model → get_current_time → model through the official SDK.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createInterface } from 'node:readline';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { natsServiceEnv, startNatsServer } from '../../test/helpers/nats-server.js';
import { createTestDatabase } from '../../test/helpers/postgres.js';
import { apiJson } from '../lib/api-json.js';
import {
  SERVICE_ENTRY,
  SERVICE_NODE_FLAGS,
  buildIfStale,
  freePort,
  serviceEnv,
  spawnProcess,
  startServer,
  type Proc,
} from '../lib/process.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const ADMIN_KEY = 'bench-admin-key-0123456789abcdef';
const VENDOR_KEY = `sk-bench-${randomBytes(12).toString('hex')}`;

export type Mode = 'embedded' | 'nats';

export interface Service {
  mode: Mode;
  base: string;
  proc: Proc;
  agentId: string;
  /** Command-line needles of the processes serving it besides itself (PostgreSQL backends, nats-server). */
  deps: string[];
  stop(): Promise<void>;
}

export async function waitForLine(proc: Proc, marker: string): Promise<void> {
  let exited = false;
  void proc.exited.then(() => (exited = true));
  while (!proc.stdout().includes(marker)) {
    if (exited) throw new Error(`${proc.name} exited before printing ${marker}:\n${proc.output().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The fake vendor, reporting each request's history; its origin. */
/** One request the fake received: messages, bytes, and `s: 1` for a compaction's summary request. */
export interface FakeRequest {
  m: number;
  b: number;
  s?: number;
}

/**
 * The zero-latency fake; `requests` collects its report lines as they come (its kept stdout is
 * the last 1 MB, which a long run outgrows, so offsets into it would not hold).
 */
export async function startFake(): Promise<{ proc: Proc; origin: string; requests: FakeRequest[] }> {
  const proc = spawnProcess({
    name: 'fake-llm',
    args: ['--import', 'tsx', join(ROOT, 'bench/real-path/fake-llm.ts'), JSON.stringify({ apiKey: VENDOR_KEY, report: true })],
    cwd: ROOT,
  });
  const requests: FakeRequest[] = [];
  createInterface({ input: proc.child.stdout! }).on('line', (line) => {
    if (line.startsWith('{"m"')) requests.push(JSON.parse(line) as FakeRequest);
  });
  await waitForLine(proc, '"port"');
  return { proc, origin: `http://127.0.0.1:${JSON.parse(proc.stdout().split('\n')[0]!).port}`, requests };
}

export async function startService(
  mode: Mode,
  fakeOrigin: string,
  extraEnv: Record<string, string>,
  nodeFlags: string[],
): Promise<Service> {
  const stops: (() => Promise<unknown>)[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-long-session-'));
  // BENCH_KEEP_DATA_DIR=1 keeps the data directory, to look at the embedded database after a run.
  if (process.env['BENCH_KEEP_DATA_DIR'] === '1') process.stderr.write(`[${mode}] data directory kept: ${dataDir}\n`);
  else stops.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  const port = await freePort();
  const env = serviceEnv(port, dataDir, ADMIN_KEY, { TURN_CONCURRENCY: '200', LLM_PROVIDER_ALLOWED_PRIVATE_HOSTS: '127.0.0.1' });
  const deps: string[] = [];
  if (mode === 'nats') {
    const db = await createTestDatabase('bench_long_session');
    stops.unshift(() => db.drop());
    env['DATABASE_URL'] = db.url;
    deps.push(` ${new URL(db.url).pathname.slice(1)} `);
    const nats = await startNatsServer();
    stops.unshift(() => nats.stop());
    Object.assign(env, natsServiceEnv(nats));
    env['SECRETS_ENCRYPTION_KEY'] = `bench:${randomBytes(32).toString('base64')}`;
    deps.push(dirname(nats.storeDir));
  }
  Object.assign(env, extraEnv);
  buildIfStale(ROOT);
  const base = `http://127.0.0.1:${port}`;
  const proc = await startServer({
    name: mode,
    args: [...nodeFlags, ...SERVICE_NODE_FLAGS, join(ROOT, SERVICE_ENTRY)],
    env,
    cwd: ROOT,
    readyUrl: `${base}/health`,
    readyTimeoutMs: 300_000,
  });
  stops.unshift(() => proc.stop(20_000));
  const json = (method: string, path: string, body: unknown) => apiJson(method, `${base}${path}`, body, ADMIN_KEY);
  const provider = await json('POST', '/v1/llm-providers', {
    name: 'fake',
    provider_type: 'openai_completions',
    api_key: VENDOR_KEY,
    base_url: `${fakeOrigin}/v1`,
  });
  const model = await json('POST', `/v1/llm-providers/${provider.id}/models`, { model_id: 'gpt-bench' });
  const agent = await json('POST', '/v1/agents', {
    name: 'bench-long-session',
    system_prompt: 'You are a benchmark agent.',
    capabilities: ['current_time'],
    default_model_id: model.id,
  });
  let stopped: Promise<void> | undefined;
  return {
    mode,
    base,
    proc,
    agentId: agent.id,
    deps,
    stop: () =>
      (stopped ??= (async () => {
        for (const s of stops) await s().catch(() => undefined);
      })()),
  };
}
