/**
 * The Mastra server (`mastra build`, then its Hono server `.mastra/output/index.mjs`) running
 * peers/mastra/src/mastra/index.ts: `bench-memory` keeps the conversation with Mastra's
 * documented Memory (libSQL), `bench-stateless` stores nothing (the floor). A fresh database per
 * start. Mastra has no concurrency setting: one Node process serves every request at once.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '../../lib/process.js';
import { npmInstall } from './install.js';
import type { Peer, PeerName } from './peer.js';

const SOURCE = 'bench/real-path/peers/mastra';
const ENTRY = '.mastra/output/index.mjs';

function buildIfStale(root: string, dir: string, log: (m: string) => void): string | null {
  const src = join(root, SOURCE, 'src/mastra/index.ts');
  const entry = join(dir, ENTRY);
  if (existsSync(entry) && statSync(entry).mtimeMs > statSync(src).mtimeMs) return null;
  cpSync(join(root, SOURCE), dir, { recursive: true });
  log('[mastra] mastra build …');
  const r = spawnSync(join(dir, 'node_modules/.bin/mastra'), ['build'], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 900_000,
    env: { ...process.env, MASTRA_TELEMETRY_DISABLED: '1' },
  });
  if (r.status !== 0 || !existsSync(entry))
    return `mastra build failed (${r.status ?? r.signal}): ${(r.stderr || r.stdout || '').slice(-1500)}`;
  return null;
}

export function mastraPeer(root: string, name: Extract<PeerName, 'mastra' | 'mastra-stateless'>): Peer {
  const dir = join(root, 'bench/.cache/mastra');
  const withMemory = name === 'mastra';
  return {
    name,
    keepsConversation: withMemory,
    client: { target: 'mastra', agentId: withMemory ? 'bench-memory' : 'bench-stateless' },
    providers: ['openai'],
    ensure(log) {
      mkdirSync(dir, { recursive: true });
      cpSync(join(root, SOURCE, 'package.json'), join(dir, 'package.json'));
      const { dependencies } = JSON.parse(readFileSync(join(root, SOURCE, 'package.json'), 'utf8')) as {
        dependencies: Record<string, string>;
      };
      const packages = Object.entries(dependencies);
      return (
        npmInstall(
          dir,
          'mastra',
          packages.map(([p, v]) => `${p}@${v}`),
          ['mastra/package.json', '@mastra/memory/package.json'],
          log,
        ) ?? buildIfStale(root, dir, log)
      );
    },
    async start({ fakeOrigin, vendorKey, port }) {
      const dbDir = mkdtempSync(join(tmpdir(), 'bench-mastra-'));
      const proc = await startServer({
        name,
        args: [join(dir, ENTRY)],
        env: {
          PORT: String(port),
          BENCH_OPENAI_BASE_URL: `${fakeOrigin}/v1`,
          BENCH_API_KEY: vendorKey,
          BENCH_MASTRA_DB: `file:${join(dbDir, 'mastra.db')}`,
          MASTRA_TELEMETRY_DISABLED: '1',
          NODE_ENV: 'production',
        },
        cwd: join(dir, '.mastra/output'),
        readyUrl: `http://127.0.0.1:${port}/health`,
        readyTimeoutMs: 120_000,
      });
      void proc.exited.then(() => rmSync(dbDir, { recursive: true, force: true }));
      return proc;
    },
  };
}
