import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ToolRun } from './audit.js';

/**
 * The slow HTTP server the workload's `fetch_url` calls reach (`/slow?ms=N&id=KEY`), so a tool
 * step lasts long enough to be killed mid-way. It records, per call key, how often it was hit
 * and whether a 200 was sent in full: the ground truth for "tool run twice" and "succeeded tool
 * recorded as failed".
 */
export interface ToolServer {
  url: string;
  runs(): ToolRun[];
  close(): Promise<void>;
}

export async function startToolServer(): Promise<ToolServer> {
  const runs = new Map<string, ToolRun>();
  const server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    const key = u.searchParams.get('id') ?? '';
    const run: ToolRun = runs.get(key) ?? { callKey: key, hits: 0, answered: false };
    run.hits++;
    runs.set(key, run);
    const timer = setTimeout(
      () => {
        res.writeHead(200, { 'content-type': 'text/plain' }).end(`done ${key}`);
      },
      Number(u.searchParams.get('ms') ?? 0),
    );
    res.on('finish', () => {
      run.answered = true;
      run.answeredAt = Date.now();
    });
    res.on('close', () => clearTimeout(timer));
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    runs: () => [...runs.values()].map((r) => ({ ...r })),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
