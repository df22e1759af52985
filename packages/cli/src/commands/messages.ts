import { messageText, type QueuedMessage } from '@agent-session-service/client';
import type { Command } from 'commander';
import { clientFor } from '../context.js';
import { onBusyOf, ON_BUSY_HELP } from '../on-busy.js';
import { printJson, printPage, printTable, type GlobalOptions } from '../output.js';

/** A queued message as a table row: its place, policy and (shortened) text. */
function queuedRow(q: QueuedMessage) {
  const text = messageText(q.message).replace(/\s+/g, ' ');
  return { id: q.id, position: q.position, on_busy: q.on_busy, text: text.length > 60 ? `${text.slice(0, 59)}…` : text };
}

/**
 * `messages send|queue|unqueue`: send a message without waiting for its turn (`chat` waits and
 * streams), list the messages waiting for a turn, and take them out (decision 0097).
 */
export function messagesCommand(program: Command): void {
  const messages = program.command('messages').description('send messages without waiting; list and cancel queued ones');
  messages
    .command('send <session> <text...>')
    .description('send a message; a busy session queues it or is interrupted as --on-busy says (prints the message or queued id)')
    .option('--on-busy <policy>', ON_BUSY_HELP, 'reject')
    .action(async (sessionId: string, words: string[], opts: { onBusy: string }, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const onBusy = onBusyOf(opts.onBusy);
      const sent = await clientFor(g).sessions.sendMessage(sessionId, words.join(' '), { onBusy });
      if (g.json) return printJson(sent);
      if ('object' in sent && sent.object === 'queued_message') {
        process.stdout.write(`queued ${sent.id} (position ${sent.position})\n`);
      } else process.stdout.write(`started ${sent.id}\n`);
    });
  messages
    .command('queue <session>')
    .description('list the messages waiting for a turn, in the order they will run')
    .action(async (sessionId: string, _opts: unknown, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const list = await clientFor(g).sessions.queue(sessionId);
      if (g.json) printPage(list);
      else printTable(list.data.map(queuedRow), ['id', 'position', 'on_busy', 'text']);
    });
  messages
    .command('unqueue <session> <queued-id...>')
    .description('cancel queued messages (refused once a turn is starting for one)')
    .action(async (sessionId: string, ids: string[], _opts: unknown, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const client = clientFor(g);
      const cancelled = [];
      for (const id of ids) cancelled.push(await client.sessions.cancelQueued(sessionId, id));
      if (g.json) printJson({ data: cancelled, total: cancelled.length });
      else process.stdout.write(`cancelled ${ids.length} queued message${ids.length === 1 ? '' : 's'}\n`);
    });
}
