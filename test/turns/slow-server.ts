import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local HTTP server for `fetch_url` tool calls (web_fetch with the operator setting LOCAL_WEB_FETCH_ENV):
 * `/slow?ms=N&id=X` answers after N ms. It counts hits per id and the most requests it ever
 * had in flight at once, which is how tests observe tool concurrency from outside the service.
 */
export interface SlowServer {
  url: string;
  hits: Map<string, number>;
  readonly inFlight: number;
  readonly maxInFlight: number;
  close(): Promise<void>;
}

export async function startSlowServer(): Promise<SlowServer> {
  const hits = new Map<string, number>();
  let inFlight = 0;
  let maxInFlight = 0;
  const server: Server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    const id = u.searchParams.get('id') ?? '';
    const ms = Number(u.searchParams.get('ms') ?? 0);
    hits.set(id, (hits.get(id) ?? 0) + 1);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      inFlight--;
    };
    res.on('close', finish);
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`slow ${id}`);
      finish();
    }, ms);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    hits,
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The session capability for `fetch_url` calls to the local server (reachable only with LOCAL_WEB_FETCH_ENV). */
export const LOCAL_WEB_FETCH = { ref: 'web_fetch' };
/** The operator setting that lets `fetch_url` reach the local server (tenants' `allow_hosts` cannot). */
export const LOCAL_WEB_FETCH_ENV = { WEB_FETCH_ALLOWED_PRIVATE_HOSTS: '127.0.0.1' };
