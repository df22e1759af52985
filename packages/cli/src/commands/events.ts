import type { EventType, SessionEvent } from '@agent-session-service/client';
import type { Command } from 'commander';
import { clientFor } from '../context.js';
import { style, type GlobalOptions } from '../output.js';

interface TailOptions {
  since?: string;
  types?: EventType[];
  exclude?: EventType[];
  follow: boolean;
  limit?: number;
  streamToken?: boolean;
}

/** `events tail <session>`: prints events and follows the stream, resuming across cycles and drops. */
export function eventsCommand(program: Command): void {
  const events = program.command('events').description('session events');
  events
    .command('tail <session>')
    .description('print the events of a session and follow new ones (resumes after cycling and network errors)')
    .option('--since <id>', 'start after this event id (default: from the beginning)')
    .option('--types <type...>', 'only these event types')
    .option('--exclude <type...>', 'not these event types')
    .option('--no-follow', 'print the stored events and exit')
    .option('--limit <n>', 'exit after this many events', (v) => Number(v))
    .option('--stream-token', 'authenticate the stream with short-lived stream tokens (renewed on expiry)')
    .action(async (sessionId: string, opts: TailOptions, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const client = clientFor(g);
      const print = (e: SessionEvent) => process.stdout.write(g.json ? JSON.stringify(e) + '\n' : line(e) + '\n');
      let count = 0;
      const enough = () => opts.limit !== undefined && count >= opts.limit;
      if (!opts.follow) {
        let since = opts.since;
        for (;;) {
          const page = await client.sessions.events(sessionId, {
            ...(since ? { since_id: since } : {}),
            ...(opts.types ? { types: opts.types } : {}),
            ...(opts.exclude ? { exclude: opts.exclude } : {}),
          });
          for (const e of page.data) {
            print(e as SessionEvent);
            count++;
            if (enough()) return;
          }
          if (!page.data.length) return;
          since = page.data.at(-1)!.id;
        }
      }
      if (opts.limit === 0) return;
      const ac = new AbortController();
      process.once('SIGINT', () => ac.abort());
      const stream = client.sessions.stream(sessionId, {
        since: opts.since,
        types: opts.types,
        exclude: opts.exclude,
        signal: ac.signal,
        auth: opts.streamToken ? 'stream-token' : 'header',
        onReconnect: (i) => {
          if (!g.json && process.stderr.isTTY) process.stderr.write(style('dim', `(reconnecting: ${i.reason})\n`));
        },
      });
      for await (const e of stream) {
        print(e);
        count++;
        if (enough()) break;
      }
    });
}

function line(e: SessionEvent): string {
  const data =
    e.type === 'output.message.delta' || e.type === 'reason.thinking.delta' ? JSON.stringify(e.data.delta) : JSON.stringify(e.data);
  return `${style('dim', e.ts)} ${style('bold', e.type.padEnd(26))} ${data.length > 160 ? data.slice(0, 157) + '…' : data}`;
}
