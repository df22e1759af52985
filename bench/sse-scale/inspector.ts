/**
 * A forced GC in a running service instance, through the inspector (instances run with
 * `--inspect=127.0.0.1:0`; the service itself has no such hook), so an idle window's memory is
 * what the streams hold and not how much garbage the last GC left. Also reads V8's own figures.
 */

/** The inspector's WebSocket URL, from the `Debugger listening on ws://…` line Node prints at start. */
export function inspectorUrl(output: string): string | null {
  return /Debugger listening on (ws:\/\/\S+)/.exec(output)?.[1] ?? null;
}

/** Runs two full GCs and returns process.memoryUsage() afterwards (KiB). */
export async function collectGarbage(url: string): Promise<{ rssKiB: number; heapUsedKiB: number; externalKiB: number } | null> {
  const ws = new WebSocket(url);
  let next = 1;
  const pending = new Map<number, (v: any) => void>();
  ws.onmessage = (m) => {
    const msg = JSON.parse(String(m.data)) as { id?: number; result?: unknown };
    if (msg.id !== undefined) pending.get(msg.id)?.(msg.result);
  };
  const call = (method: string, params: unknown = {}) =>
    new Promise<any>((resolve) => {
      const id = next++;
      pending.set(id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
  try {
    await new Promise<void>((resolve, reject) => {
      ws.onopen = () => resolve();
      ws.onerror = () => reject(new Error(`inspector ${url} not reachable`));
    });
    await call('HeapProfiler.collectGarbage');
    await call('HeapProfiler.collectGarbage');
    const r = await call('Runtime.evaluate', { expression: 'JSON.stringify(process.memoryUsage())', returnByValue: true });
    const m = JSON.parse(r.result.value as string) as { rss: number; heapUsed: number; external: number };
    return { rssKiB: m.rss / 1024, heapUsedKiB: m.heapUsed / 1024, externalKiB: m.external / 1024 };
  } catch {
    return null;
  } finally {
    ws.close();
  }
}
