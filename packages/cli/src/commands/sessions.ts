import type { Command } from 'commander';
import { clientFor } from '../context.js';
import { printJson, printPage, printTable, type GlobalOptions } from '../output.js';
import { compactCommand } from './compact.js';

/** `sessions ls|create|rm|compact`. */
export function sessionsCommand(program: Command): void {
  const sessions = program.command('sessions').description('list, create, compact and delete sessions');
  sessions
    .command('ls')
    .description('list sessions (newest page)')
    .option('--agent <id>', 'only sessions of this agent')
    .option('--limit <n>', 'page size (max 100)', (v) => Number(v), 20)
    .option('--offset <n>', 'skip this many', (v) => Number(v), 0)
    .action(async (opts: { agent?: string; limit: number; offset: number }, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const page = await clientFor(g).sessions.list({
        limit: opts.limit,
        offset: opts.offset,
        ...(opts.agent ? { agent_id: opts.agent } : {}),
      });
      if (g.json) printPage(page);
      else printTable(page.data, ['id', 'title', 'status', 'queued_messages', 'agent_id', 'updated_at']);
    });
  sessions
    .command('create')
    .description('create a session on an agent (or a harness)')
    .option('--agent <id>', 'agent id')
    .option('--agent-name <name>', 'the active agent of this name')
    .option('--harness <id>', 'harness id')
    .option('--title <title>', 'title')
    .action(async (opts: { agent?: string; agentName?: string; harness?: string; title?: string }, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const session = await clientFor(g).sessions.create({
        ...(opts.agent ? { agent_id: opts.agent } : {}),
        ...(opts.agentName ? { agent_name: opts.agentName } : {}),
        ...(opts.harness ? { harness_id: opts.harness } : {}),
        ...(opts.title ? { title: opts.title } : {}),
      });
      if (g.json) printJson(session);
      else process.stdout.write(`${session.id}\n`);
    });
  compactCommand(sessions);
  sessions
    .command('rm <id...>')
    .description('delete sessions permanently (history, files and events)')
    .action(async (ids: string[], _opts: unknown, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const client = clientFor(g);
      for (const id of ids) await client.sessions.remove(id);
      if (g.json) printJson({ deleted: ids });
      else process.stdout.write(`deleted ${ids.length} session${ids.length === 1 ? '' : 's'}\n`);
    });
}
