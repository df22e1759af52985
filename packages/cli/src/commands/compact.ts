import type { AgentSessionClient, SessionEvent } from '@agent-session-service/client';
import type { Command } from 'commander';
import { clientFor } from '../context.js';
import { printJson, startSpinner, style, type GlobalOptions } from '../output.js';

/** How a compaction turn ended, from its events. */
interface CompactionOutcome {
  status: 'compacted' | 'nothing_to_compact' | 'failed' | 'cancelled';
  turn_id: string;
  /** `session.compacted`'s data when it compacted. */
  compacted?: Record<string, unknown>;
  error?: string;
}

/** Reads the session's events after `since` until the compaction turn's `session.idled`. */
async function followCompaction(
  client: AgentSessionClient,
  sessionId: string,
  turnId: string,
  since: string | undefined,
): Promise<CompactionOutcome> {
  const outcome: CompactionOutcome = { status: 'failed', turn_id: turnId };
  const stream = client.sessions.stream(sessionId, since ? { since } : {});
  try {
    for await (const e of stream as AsyncIterable<SessionEvent & { data: Record<string, unknown> }>) {
      if (e.context?.turn_id !== turnId) continue;
      if (e.type === 'session.compacted') Object.assign(outcome, { status: 'compacted', compacted: e.data });
      if (e.type === 'turn.cancelled') outcome.status = 'cancelled';
      if (e.type === 'turn.failed') {
        outcome.status = e.data['error_code'] === 'nothing_to_compact' ? 'nothing_to_compact' : 'failed';
        outcome.error = String(e.data['error']);
      }
      if (e.type === 'session.idled') break;
    }
  } finally {
    stream.close();
  }
  return outcome;
}

const EXIT: Record<CompactionOutcome['status'], number> = { compacted: 0, nothing_to_compact: 0, failed: 1, cancelled: 130 };

/** `sessions compact <id>`: compacts on demand and, unless --no-wait, waits for the outcome. */
export function compactCommand(sessions: Command): void {
  sessions
    .command('compact <id>')
    .description('compact the history now: a summary replaces all but the newest exchange in later requests')
    .option('--instructions <text>', 'what the summary should keep or stress')
    .option('--no-wait', 'print the compaction turn and return without waiting for it')
    .action(async (sessionId: string, opts: { instructions?: string; wait: boolean }, cmd: Command) => {
      const g = cmd.optsWithGlobals<GlobalOptions>();
      const client = clientFor(g);
      const since = opts.wait ? await client.sessions.lastEventId(sessionId) : undefined;
      const accepted = await client.sessions.compact(sessionId, opts.instructions ? { instructions: opts.instructions } : {});
      if (!opts.wait) {
        if (g.json) printJson(accepted);
        else process.stdout.write(`${accepted.turn_id}\n`);
        return;
      }
      const spinner = startSpinner('compacting', !!g.json);
      const outcome = await followCompaction(client, sessionId, accepted.turn_id, since).finally(() => spinner.stop());
      process.exitCode = EXIT[outcome.status];
      if (g.json) return printJson(outcome);
      const c = outcome.compacted;
      if (c)
        process.stdout.write(`compacted: ${c['tokens_before']} → ${c['tokens_after']} tokens\n${style('dim', String(c['summary']))}\n`);
      else process.stderr.write(`${outcome.status === 'cancelled' ? 'compaction cancelled' : (outcome.error ?? 'compaction failed')}\n`);
    });
}
