import { createInterface } from 'node:readline/promises';
import { createAgentSessionClient } from '@agent-session-service/client';
import type { Command } from 'commander';
import { configPath, readConfig, writeConfig } from '../config.js';
import { UsageError } from '../context.js';
import { printJson, withSpinner, type GlobalOptions } from '../output.js';
import { readStdin } from '../stdin.js';

/** `login`: checks the key against `GET /v1/auth/me` and stores URL and key (file mode 0600). */
export function loginCommand(program: Command): void {
  program
    .command('login')
    .description('store the service URL and an API key in the config file (mode 0600)')
    .option('--key-stdin', 'read the key from standard input')
    .action(async (opts: { keyStdin?: boolean }, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const saved = readConfig();
      const url = (g.url ?? process.env['AGENT_SESSION_URL'] ?? saved.url ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
      let key = g.key ?? process.env['AGENT_SESSION_KEY'];
      if (opts.keyStdin) key = (await readStdin()).trim();
      if (!key && process.stdin.isTTY) {
        const rl = createInterface({ input: process.stdin, output: process.stderr });
        key = (await rl.question('API key: ')).trim();
        rl.close();
      }
      if (!key) throw new UsageError('no API key: pass --key, --key-stdin or AGENT_SESSION_KEY');
      const client = createAgentSessionClient({ baseUrl: url, apiKey: key });
      const me = await withSpinner(`checking ${url}`, () => client.auth.me(), g.json);
      const path = configPath();
      writeConfig({ url, key }, path);
      if (g.json) printJson({ url, config: path, user: me.user ?? me });
      else process.stdout.write(`Logged in to ${url} as ${describe(me)}; saved to ${path}\n`);
    });
}

function describe(me: unknown): string {
  const user = (me as { user?: { email?: string; role?: string } }).user;
  return user?.email ? `${user.email}${user.role ? ` (${user.role})` : ''}` : 'the key holder';
}
