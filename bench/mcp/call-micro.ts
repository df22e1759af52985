/**
 * The client side of one MCP `tools/call` in-process (issue 27's "≤ 2 ms CPU per call"): the
 * service's own McpConnection (official SDK client, guarded fetch, keep-alive) against
 * bench/mcp/mcp-server.ts in its own process; 100 warm-up calls, then N timed calls in a row.
 * Prints this process's CPU (user + system) and wall time per call.
 *
 *   node --import tsx bench/mcp/call-micro.ts [N=500]
 */
import { spawn } from 'node:child_process';
import { McpConnection } from '../../src/capabilities/mcp/connection.js';
import { parseHostAllowlist } from '../../src/capabilities/web-fetch/address-policy.js';

const child = spawn(process.execPath, ['--import', 'tsx', new URL('./mcp-server.ts', import.meta.url).pathname], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const port = await new Promise<number>((r) => child.stdout.once('data', (d) => r(JSON.parse(String(d)).port)));
const conn = new McpConnection({
  allowPrivateHosts: parseHostAllowlist('127.0.0.1'),
  maxResponseBytes: 1 << 20,
  maxListBytes: 256 << 10,
  toolsTtlMs: 60_000,
  now: Date.now,
});
const timeout = () => AbortSignal.timeout(10_000);
const target = { url: new URL(`http://127.0.0.1:${port}/mcp`), headers: {}, transport: 'auto' as const };
await conn.open(target, timeout(), 10_000);
await conn.listTools(128, timeout(), 10_000);
const N = Number(process.argv[2] ?? 500);
for (let i = 0; i < 100; i++) await conn.callTool('now', { timezone: 'UTC' }, timeout(), 10_000);
const c0 = process.cpuUsage();
const t0 = performance.now();
for (let i = 0; i < N; i++) await conn.callTool('now', { timezone: 'UTC' }, timeout(), 10_000);
const c = process.cpuUsage(c0);
console.log(
  `${N} calls: ${((c.user + c.system) / 1000 / N).toFixed(3)} ms CPU per call, ${((performance.now() - t0) / N).toFixed(2)} ms wall`,
);
await conn.close();
child.kill();
