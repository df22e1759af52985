import { createAgentSessionClient, type AgentSessionClient } from '@agent-session-service/client';
import { readConfig } from './config.js';
import type { GlobalOptions } from './output.js';

/** The client for a command: `--url`/`--key`, else `AGENT_SESSION_URL`/`AGENT_SESSION_KEY`, else the login config. */
export function clientFor(opts: GlobalOptions): AgentSessionClient {
  const saved = readConfig();
  const baseUrl = opts.url ?? process.env['AGENT_SESSION_URL'] ?? saved.url;
  const apiKey = opts.key ?? process.env['AGENT_SESSION_KEY'] ?? saved.key;
  if (!baseUrl || !apiKey)
    throw new UsageError('not logged in: run `agent-session login --url <url> --key <key>` (or pass --url and --key)');
  return createAgentSessionClient({ baseUrl, apiKey });
}

/** A mistake of the caller: printed without a stack, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
