import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A tiny control channel between the benchmark's parent and the processes it spawns (servers
 * under test, load generators): newline-delimited JSON over one UNIX socket. It lets the
 * processes be started with bench/lib/process.ts (pinning, /proc readings, cleanup), which
 * spawns without an IPC channel.
 *
 * Messages: {id, method, params} requests (answered with {id, result} or {id, error}) and
 * {method, params} notifications without an answer (the writer's ticks).
 */

type Handler = (params: any) => unknown;

interface Wire {
  id?: number;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: string;
  hello?: string;
}

function lines(socket: Socket, onMessage: (m: Wire) => void): void {
  let carry = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    carry += chunk;
    let nl: number;
    while ((nl = carry.indexOf('\n')) >= 0) {
      const line = carry.slice(0, nl);
      carry = carry.slice(nl + 1);
      if (line) onMessage(JSON.parse(line) as Wire);
    }
  });
}

export interface Peer {
  name: string;
  call<T = unknown>(method: string, params?: unknown, timeoutMs?: number): Promise<T>;
  notify(method: string, params?: unknown): void;
}

/** Parent side: accepts children and hands them out by the name they announce. */
export function createControlHub(path: string) {
  const peers = new Map<string, Peer>();
  const waiting = new Map<string, (p: Peer) => void>();
  const server: Server = createServer((socket) => {
    let nextId = 1;
    const pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
    let peer: Peer | undefined;
    socket.on('error', () => undefined);
    socket.on('close', () => {
      for (const p of pending.values()) p.reject(new Error(`control: ${peer?.name ?? 'peer'} went away`));
      pending.clear();
    });
    lines(socket, (m) => {
      if (m.hello) {
        const name = m.hello;
        peer = {
          name,
          call(method, params, timeoutMs = 600_000) {
            const id = nextId++;
            socket.write(JSON.stringify({ id, method, params }) + '\n');
            return new Promise((resolve, reject) => {
              const timer = setTimeout(() => {
                pending.delete(id);
                reject(new Error(`control: ${name}.${method} timed out after ${timeoutMs} ms`));
              }, timeoutMs);
              pending.set(id, {
                resolve: (v) => (clearTimeout(timer), resolve(v as never)),
                reject: (e) => (clearTimeout(timer), reject(e)),
              });
            });
          },
          notify(method, params) {
            socket.write(JSON.stringify({ method, params }) + '\n');
          },
        };
        peers.set(name, peer);
        waiting.get(name)?.(peer);
        waiting.delete(name);
        return;
      }
      if (m.id !== undefined) {
        const p = pending.get(m.id);
        pending.delete(m.id);
        if (m.error !== undefined) p?.reject(new Error(`${peer?.name}: ${m.error}`));
        else p?.resolve(m.result);
      }
    });
  });
  return {
    listen: () => new Promise<void>((resolve) => server.listen(path, resolve)),
    /** Resolves once a child announced itself under `name`. */
    peer(name: string, timeoutMs = 120_000): Promise<Peer> {
      const p = peers.get(name);
      if (p) return Promise.resolve(p);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`control: ${name} never connected`)), timeoutMs);
        waiting.set(name, (peer) => {
          clearTimeout(timer);
          resolve(peer);
        });
      });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Child side: announces `name` and serves `handlers` (sync or async) until the parent goes. */
export function connectControl(path: string, name: string, handlers: Record<string, Handler>): Socket {
  const socket = createConnection(path);
  socket.on('connect', () => socket.write(JSON.stringify({ hello: name }) + '\n'));
  // The parent is gone: nothing more to do in this benchmark process.
  socket.on('close', () => process.exit(0));
  socket.on('error', () => process.exit(1));
  lines(socket, (m) => {
    const fn = m.method ? handlers[m.method] : undefined;
    if (m.id === undefined) {
      if (fn) fn(m.params);
      return;
    }
    const reply = (body: Partial<Wire>) => socket.write(JSON.stringify({ id: m.id, ...body }) + '\n');
    if (!fn) return reply({ error: `unknown method ${m.method}` });
    Promise.resolve()
      .then(() => fn(m.params))
      .then(
        (result) => reply({ result: result ?? null }),
        (err: unknown) => reply({ error: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
      );
  });
  return socket;
}

/** Monotonic microseconds (CLOCK_MONOTONIC, the same clock in every process on the host). */
export function nowUs(): number {
  return Number(process.hrtime.bigint() / 1000n);
}
