import { Command } from 'commander';
import { ApiError } from '@agent-session-service/client';
import { adminCommand } from './commands/admin.js';
import { agentsCommand } from './commands/agents.js';
import { chatCommand } from './commands/chat.js';
import { eventsCommand } from './commands/events.js';
import { loginCommand } from './commands/login.js';
import { messagesCommand } from './commands/messages.js';
import { sessionsCommand } from './commands/sessions.js';
import { webhooksCommand } from './commands/webhooks.js';
import { UsageError } from './context.js';

/** The command tree of `agent-session`. */
export function createProgram(): Command {
  const program = new Command('agent-session')
    .description('Command line for the Agent Session Service')
    .version('0.1.0')
    .option('--url <url>', 'service URL (default: AGENT_SESSION_URL, then the login config)')
    .option('--key <key>', 'API key (default: AGENT_SESSION_KEY, then the login config)')
    .option('--json', 'machine-readable JSON output');
  loginCommand(program);
  agentsCommand(program);
  sessionsCommand(program);
  chatCommand(program);
  messagesCommand(program);
  eventsCommand(program);
  adminCommand(program);
  webhooksCommand(program);
  return program;
}

/** Runs the CLI; errors become one line on stderr and exit code 1 (2 for usage errors). */
export async function run(argv: string[]): Promise<void> {
  try {
    await createProgram().parseAsync(argv);
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    process.stderr.write(`error: ${e.message}\n`);
    process.exitCode = e instanceof UsageError ? 2 : e instanceof ApiError && e.status === 401 ? 3 : 1;
  }
}
