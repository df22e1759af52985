/**
 * Open MCP connections, shared by the turns of one organisation that reach the same server with
 * the same headers (the key is a hash of organisation, URL, transport and resolved headers, so
 * different credentials never share a connection, and no secret value is kept as a key). Bounded:
 * at most `maxConnections` in all and `maxConnectionsPerOrg` per organisation (the least recently
 * used is closed first, so one organisation's churn closes only its own beyond its share), and a
 * connection idle for `idleCloseMs` is closed.
 */
import { createHash } from 'node:crypto';
import type { McpConnection, McpConnectionOptions, McpTarget } from './connection.js';

export interface McpClientPoolOptions extends Omit<McpConnectionOptions, 'now'> {
  /** Deadline of opening a connection (initialize), in ms. */
  connectTimeoutMs: number;
  maxConnections: number;
  maxConnectionsPerOrg: number;
  idleCloseMs: number;
  now?: () => number;
}

export function connectionKey(orgId: string, target: McpTarget): string {
  const headers = Object.entries(target.headers).sort(([a], [b]) => (a < b ? -1 : 1));
  return createHash('sha256')
    .update(JSON.stringify([orgId, target.url.href, target.transport, headers]))
    .digest('base64url');
}

export function createMcpClientPool(opts: McpClientPoolOptions) {
  const now = opts.now ?? Date.now;
  /** Insertion order is use order: the first entry is the least recently used. */
  const open = new Map<string, Promise<McpConnection>>();
  const orgOf = new Map<string, string>();
  const sweeper = setInterval(() => void sweep(), Math.max(1000, Math.floor(opts.idleCloseMs / 2)));
  sweeper.unref();

  async function sweep(): Promise<void> {
    for (const [key, pending] of open) {
      const conn = await pending.catch(() => null);
      if (conn && now() - conn.lastUsed > opts.idleCloseMs && open.get(key) === pending) evict(key);
    }
  }

  function evict(key: string): void {
    const pending = open.get(key);
    open.delete(key);
    orgOf.delete(key);
    void pending?.then((c) => c.close()).catch(() => undefined);
  }

  function evictOverflow(org: string): void {
    const own = [...open.keys()].filter((k) => orgOf.get(k) === org);
    for (const key of own.slice(0, Math.max(0, own.length - opts.maxConnectionsPerOrg))) evict(key);
    while (open.size > opts.maxConnections) evict(open.keys().next().value!);
  }

  function connect(org: string, key: string, target: McpTarget, signal: AbortSignal): Promise<McpConnection> {
    let conn: McpConnection | undefined;
    // The SDK (and zod under it) loads with the first server a turn uses, not at every start.
    const pending: Promise<McpConnection> = import('./connection.js').then(({ McpConnection }) => {
      conn = new McpConnection({ ...opts, now });
      conn.onClose = () => {
        if (open.get(key) === settled) evict(key);
      };
      return conn.open(target, signal, opts.connectTimeoutMs).then(() => conn!);
    });
    const settled = pending.then(
      (c) => c,
      async (err: unknown) => {
        if (open.get(key) === settled) evict(key);
        await conn?.close();
        throw Object.assign(err instanceof Error ? err : new Error(String(err)), { mcpFailure: conn?.failure ?? null });
      },
    );
    open.set(key, settled);
    orgOf.set(key, org);
    evictOverflow(org);
    return settled;
  }

  return {
    /** An open connection for the target (opened now if none is, or the last one failed). */
    async connection(org: string, key: string, target: McpTarget, signal: AbortSignal): Promise<McpConnection> {
      const pending = open.get(key);
      if (pending) {
        open.delete(key);
        open.set(key, pending);
        const conn = await pending;
        if (!conn.closed) return conn;
      }
      return connect(org, key, target, AbortSignal.any([signal, AbortSignal.timeout(opts.connectTimeoutMs)]));
    },
    size: () => open.size,
    async close(): Promise<void> {
      clearInterval(sweeper);
      const all = [...open.values()];
      open.clear();
      orgOf.clear();
      await Promise.all(all.map((p) => p.then((c) => c.close()).catch(() => undefined)));
    },
  };
}

export type McpClientPool = ReturnType<typeof createMcpClientPool>;
