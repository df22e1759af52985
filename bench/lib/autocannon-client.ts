/**
 * The autocannon load generator as its own process, with exact latency percentiles.
 *
 *   node --import tsx bench/lib/autocannon-client.ts '<json options>'
 *
 * autocannon's own histogram stores whole milliseconds, which turns every sub-millisecond p50
 * into "0". This wrapper records each 2xx response time as autocannon measured it (hrtime, float
 * ms) and prints one JSON line: autocannon's summary plus percentiles computed from those
 * samples. Responses with another status than expected are counted, not timed. Spawned by
 * load.ts; not meant to be imported.
 */
import { createRequire } from 'node:module';

interface ClientOptions {
  url: string;
  connections: number;
  durationS: number;
  pipelining?: number;
  headers?: Record<string, string>;
  /** The status every response must have (default: any 2xx). */
  expectStatus?: number;
}

interface AutocannonInstance {
  on(event: 'response', fn: (client: unknown, statusCode: number, bytes: number, responseTimeMs: number) => void): void;
}

interface AutocannonSummary {
  requests: { average: number; total: number };
  latency: { average: number; p50: number; p90: number; p99: number; max: number };
  duration: number;
  errors: number;
  timeouts: number;
}

type Autocannon = (opts: Record<string, unknown>, cb: (err: Error | null, result: AutocannonSummary) => void) => AutocannonInstance;

const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;
const opts = JSON.parse(process.argv[2] ?? '{}') as ClientOptions;

let samples = new Float64Array(1 << 20);
let n = 0;
let unexpectedStatus = 0;
const expected = (status: number) => (opts.expectStatus ? status === opts.expectStatus : status >= 200 && status < 300);

const instance = autocannon(
  {
    url: opts.url,
    connections: opts.connections,
    duration: opts.durationS,
    pipelining: opts.pipelining ?? 1,
    headers: opts.headers ?? {},
  },
  (err, result) => {
    if (err) {
      process.stderr.write(`autocannon: ${err.message}\n`);
      process.exit(1);
    }
    const sorted = samples.subarray(0, n).sort();
    const pct = (p: number) => (n ? round3(sorted[Math.min(n - 1, Math.ceil((p / 100) * n) - 1)]!) : 0);
    let sum = 0;
    for (let i = 0; i < n; i++) sum += sorted[i]!;
    process.stdout.write(
      JSON.stringify({
        requestsPerSec: result.requests.average,
        totalRequests: result.requests.total,
        durationS: result.duration,
        unexpectedStatus,
        errors: result.errors,
        timeouts: result.timeouts,
        latency: { mean: n ? round3(sum / n) : 0, p50: pct(50), p90: pct(90), p99: pct(99), max: n ? round3(sorted[n - 1]!) : 0 },
        samples: n,
      }) + '\n',
    );
  },
);

instance.on('response', (_client, statusCode, _bytes, ms) => {
  if (!expected(statusCode)) {
    unexpectedStatus++;
    return;
  }
  if (n === samples.length) {
    const grown = new Float64Array(samples.length * 2);
    grown.set(samples);
    samples = grown;
  }
  samples[n++] = ms;
});

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
