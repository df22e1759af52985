import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnProcess, trackCpu } from './process.js';

/**
 * HTTP load generators, always run as a separate process (optionally pinned to its own CPU) so
 * the client never shares an event loop with the server it measures.
 *
 * - `autocannon` (npm devDependency, the default), through autocannon-client.ts, which keeps
 *   every response time so percentiles are exact rather than whole milliseconds.
 * - `wrk` (Debian package, optional): C, lighter on the CPU, microsecond percentiles.
 */

export type LoadTool = 'autocannon' | 'wrk';

export interface LoadOptions {
  url: string;
  connections: number;
  durationS: number;
  headers?: Record<string, string>;
  /** CPU list for `taskset -c`; unset: not pinned. */
  cpus?: string;
  /** autocannon only (default 1). */
  pipelining?: number;
  /** The status every response must have; default any 2xx. */
  expectStatus?: number;
}

export interface LoadResult {
  tool: LoadTool;
  url: string;
  connections: number;
  durationS: number;
  /** Mean requests per second over the run (all responses). */
  requestsPerSec: number;
  /** Milliseconds. */
  latency: { mean: number; p50: number; p90: number; p99: number; max: number };
  totalRequests: number;
  /** Responses with another status than expected, socket errors and timeouts: a valid run has all three at 0. */
  unexpectedStatus: number;
  errors: number;
  timeouts: number;
  /** CPU seconds the load generator used (to see whether the client was the bottleneck). */
  clientCpuSeconds: number | null;
}

export function wrkAvailable(): boolean {
  return spawnSync('wrk', ['-v'], { stdio: 'ignore' }).error === undefined;
}

export async function runLoad(tool: LoadTool, opts: LoadOptions): Promise<LoadResult> {
  return tool === 'wrk' ? runWrk(opts) : runAutocannon(opts);
}

export async function runAutocannon(opts: LoadOptions): Promise<LoadResult> {
  const client = join(dirname(fileURLToPath(import.meta.url)), 'autocannon-client.ts');
  const spec = {
    url: opts.url,
    connections: opts.connections,
    durationS: opts.durationS,
    pipelining: opts.pipelining ?? 1,
    headers: opts.headers ?? {},
    expectStatus: opts.expectStatus,
  };
  const proc = spawnProcess({ name: 'autocannon', args: ['--import', 'tsx', client, JSON.stringify(spec)], cpus: opts.cpus });
  const cpu = trackCpu(proc.pid);
  const code = await proc.exited;
  const clientCpuSeconds = cpu.stop();
  const line = proc.stdout().trim().split('\n').pop() ?? '';
  if (code !== 0 || !line.startsWith('{')) throw new Error(`autocannon failed (${code}):\n${proc.output().slice(-2000)}`);
  const r = JSON.parse(line) as Omit<LoadResult, 'tool' | 'url' | 'connections' | 'durationS' | 'clientCpuSeconds'>;
  return {
    tool: 'autocannon',
    url: opts.url,
    connections: opts.connections,
    durationS: opts.durationS,
    requestsPerSec: r.requestsPerSec,
    latency: r.latency,
    totalRequests: r.totalRequests,
    unexpectedStatus: r.unexpectedStatus,
    errors: r.errors,
    timeouts: r.timeouts,
    clientCpuSeconds,
  };
}

/** wrk with a Lua `done` hook that prints the summary as one JSON line (latencies in µs). */
const WRK_LUA = `
init = function(args)
  for i = 1, #args, 2 do wrk.headers[args[i]] = args[i + 1] end
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('{"requests":%d,"duration_us":%d,"status_errors":%d,"errors":%d,"timeouts":%d,"mean":%f,"p50":%d,"p90":%d,"p99":%d,"max":%d}\\n',
    summary.requests, summary.duration, e.status, e.connect + e.read + e.write, e.timeout,
    latency.mean, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
`;

export async function runWrk(opts: LoadOptions): Promise<LoadResult> {
  if (!wrkAvailable()) throw new Error("wrk is not installed (Debian: 'apt-get install -y wrk'); use --tool autocannon");
  const dir = mkdtempSync(join(tmpdir(), 'bench-wrk-'));
  try {
    const script = join(dir, 'report.lua');
    writeFileSync(script, WRK_LUA);
    const headerArgs = Object.entries(opts.headers ?? {}).flat();
    const args = [
      '-t',
      '1',
      '-c',
      String(opts.connections),
      '-d',
      `${opts.durationS}s`,
      '--latency',
      '-s',
      script,
      opts.url,
      '--',
      ...headerArgs,
    ];
    const proc = spawnProcess({ name: 'wrk', command: 'wrk', args, cpus: opts.cpus });
    const cpu = trackCpu(proc.pid);
    const code = await proc.exited;
    const clientCpuSeconds = cpu.stop();
    const line = proc
      .output()
      .split('\n')
      .find((l) => l.startsWith('{"requests"'));
    if (code !== 0 || !line) throw new Error(`wrk failed (${code}):\n${proc.output().slice(-2000)}`);
    const r = JSON.parse(line) as {
      requests: number;
      duration_us: number;
      status_errors: number;
      errors: number;
      timeouts: number;
      mean: number;
      p50: number;
      p90: number;
      p99: number;
      max: number;
    };
    const ms = (us: number) => us / 1000;
    return {
      tool: 'wrk',
      url: opts.url,
      connections: opts.connections,
      durationS: opts.durationS,
      requestsPerSec: r.requests / (r.duration_us / 1e6),
      latency: { mean: ms(r.mean), p50: ms(r.p50), p90: ms(r.p90), p99: ms(r.p99), max: ms(r.max) },
      totalRequests: r.requests,
      // wrk counts every status >= 400 as an error; it cannot tell which status came back.
      unexpectedStatus: (opts.expectStatus ?? 200) >= 400 ? r.requests - r.status_errors : r.status_errors,
      errors: r.errors,
      timeouts: r.timeouts,
      clientCpuSeconds,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
