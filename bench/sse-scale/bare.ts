import { join } from 'node:path';
import { inspectorUrl } from './inspector.js';
import { freePort, startServer, type Proc } from '../lib/process.js';

/**
 * The physical limit beside the service: as many bare uWebSockets.js SSE servers
 * (bench/sse-fanout/bare-server.ts) as service instances, each holding the same share of the
 * same client load, idle (heartbeats only), so the ratio ours/bare compares like with like
 * (the descriptor limit of 20,000 per process applies to both). Each connects to the control
 * socket (it exits when the socket goes) and is otherwise left alone.
 */
export interface BareServers {
  procs: (Proc & { inspector: string | null })[];
  ports: number[];
  stop(): Promise<void>;
}

export async function startBareServers(o: { root: string; controlPath: string; count: number }): Promise<BareServers> {
  const procs: BareServers['procs'] = [];
  const ports: number[] = [];
  for (let i = 0; i < o.count; i++) {
    const port = await freePort();
    const name = `bare${i + 1}`;
    const proc = await startServer({
      name,
      args: ['--inspect=127.0.0.1:0', '--import', 'tsx', join(o.root, 'bench/sse-fanout/bare-server.ts'), o.controlPath],
      env: { PORT: String(port), HOST: '127.0.0.1' },
      cwd: o.root,
      readyUrl: `http://127.0.0.1:${port}/health`,
    });
    procs.push(Object.assign(proc, { inspector: inspectorUrl(proc.output()) }));
    ports.push(port);
  }
  return {
    procs,
    ports,
    stop: async () => {
      await Promise.all(procs.map((p) => p.stop(2000)));
    },
  };
}
