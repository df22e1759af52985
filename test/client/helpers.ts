import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createAgentSessionClient, type AgentSessionClient } from '@agent-session-service/client';
import type { TestApp } from '../helpers/app.js';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

let built = false;
/** Builds packages/client and packages/cli (incremental `tsc -b`; `npm ci` already ran it through `prepare`). */
export function buildPackages(): void {
  if (built) return;
  execFileSync(process.execPath, [join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', 'packages/client', 'packages/cli'], {
    cwd: REPO_ROOT,
    stdio: 'inherit',
  });
  built = true;
}

/** A client of the test app with its admin key; `fetch` wraps the transport (fault injection). */
export function clientOf(app: TestApp, fetchImpl?: typeof fetch): AgentSessionClient {
  return createAgentSessionClient({ baseUrl: app.url, apiKey: app.adminKey, ...(fetchImpl ? { fetch: fetchImpl } : {}) });
}

/** A session on a fresh agent (client tools optional); returns its id. */
export async function newSession(client: AgentSessionClient, clientTools: unknown[] = []): Promise<string> {
  const agent = await client.agents.create({ name: 'client-test', system_prompt: 'You help.', client_tools: clientTools as never });
  const session = await client.sessions.create({ agent_id: agent.id });
  return session.id;
}

/**
 * A fetch that cuts SSE bodies after a few chunks (a connection killed mid-stream): the reader
 * then sees a network error, as after a reset.
 */
export function killingFetch(chunksBeforeKill: () => number): { fetch: typeof fetch; kills: () => number } {
  let kills = 0;
  const wrapped: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    if (!res.body || !(res.headers.get('content-type') ?? '').includes('text/event-stream')) return res;
    const reader = res.body.getReader();
    let left = chunksBeforeKill();
    const body = new ReadableStream<Uint8Array>({
      async pull(ctrl) {
        if (left-- <= 0) {
          kills++;
          await reader.cancel();
          ctrl.error(new TypeError('terminated: connection reset'));
          return;
        }
        const { done, value } = await reader.read();
        if (done) ctrl.close();
        else ctrl.enqueue(value);
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(body, { status: res.status, headers: res.headers });
  };
  return { fetch: wrapped, kills: () => kills };
}
