/**
 * For samplers preloaded into a benchmarked service: a window of `forS` seconds that opens
 * `fromLoadS` seconds after the service's first model request (or `fromS` after the process
 * start), counting the conversations in it. The benchmark's conversation is model → tool →
 * model, and the service sends every model request through undici, which reports each on its
 * diagnostics channel (the HTTP server, uWebSockets.js, has no such hook).
 */
import { subscribe } from 'node:diagnostics_channel';

export interface LoadWindow {
  /** Conversations in the window: model requests sent in it / 2. */
  conversations(): number;
}

export interface LoadWindowOptions {
  fromS: number;
  forS: number;
  /** Count `fromS` from the first model request instead of the process start. */
  fromLoad: boolean;
  open(): void | Promise<void>;
  close(window: LoadWindow): void | Promise<void>;
}

export function loadWindow({ fromS, forS, fromLoad, open, close }: LoadWindowOptions): void {
  let modelCalls: number | null = null;
  let loadSeen = false;
  const window: LoadWindow = { conversations: () => (modelCalls ?? 0) / 2 };
  const start = () =>
    setTimeout(async () => {
      modelCalls = 0;
      await open();
      setTimeout(() => void close(window), forS * 1000).unref();
    }, fromS * 1000).unref();
  subscribe('undici:request:create', (m) => {
    const { request } = m as { request: { path: string } };
    if (!request.path.includes('/chat/completions') && !request.path.includes('/messages')) return;
    if (modelCalls !== null) modelCalls++;
    if (fromLoad && !loadSeen) {
      loadSeen = true;
      start();
    }
  });
  if (!fromLoad) start();
}
