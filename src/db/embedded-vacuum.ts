/**
 * Vacuum for the embedded database (docs/decisions/0107-embedded-vacuum.md). PGlite runs
 * PostgreSQL as one backend without the postmaster, so autovacuum never runs: a row updated on
 * every turn (`sessions`, `bus_turns`, `session_snapshots`) leaves a dead version each time,
 * forever, and the statements that read those rows walk the pages the versions fill. Measured on
 * the database of bench/long-session after 5,000 turns, a session read by id took 0.72 ms and a
 * turn claim 0.49 ms, against 0.36 and 0.33 ms once vacuumed. This does autovacuum's part on a
 * timer: the tables whose dead rows pass autovacuum's default threshold (50 + 20 % of the live
 * rows; PostgreSQL counts them in the same backend) are vacuumed, one at a time, and only
 * those, so the append-only event log is not scanned. Distributed mode has PostgreSQL's own.
 */
import type { Logger } from '../log.js';

/** autovacuum_vacuum_threshold and autovacuum_vacuum_scale_factor, PostgreSQL's defaults. */
const THRESHOLD = 50;
const SCALE = 0.2;

const DUE = `select quote_ident(schemaname) || '.' || quote_ident(relname) as name from pg_stat_user_tables
  where n_dead_tup > ${THRESHOLD} + ${SCALE} * n_live_tup order by n_dead_tup desc`;

export interface EmbeddedVacuumOptions {
  /** Runs one statement outside any transaction (VACUUM refuses to run in one). */
  sql: <T>(text: string) => Promise<T[]>;
  log: Logger;
  /** Between two rounds, in ms; 0: never. */
  intervalMs: number;
}

export interface EmbeddedVacuum {
  /** One round now: the tables vacuumed (tests, and the timer). */
  round(): Promise<string[]>;
  stop(): Promise<void>;
}

export function startEmbeddedVacuum({ sql, log, intervalMs }: EmbeddedVacuumOptions): EmbeddedVacuum {
  let running: Promise<string[]> | undefined;
  let stopped = false;

  async function vacuumDue(): Promise<string[]> {
    const due = (await sql<{ name: string }>(DUE)).map((r) => r.name);
    // One statement per table: the embedded server runs one statement at a time, and a turn's
    // statements wait behind each; a small table's VACUUM is a millisecond or two.
    for (const name of due) {
      if (stopped) break;
      await sql(`vacuum ${name}`);
    }
    return due;
  }

  function round(): Promise<string[]> {
    running ??= vacuumDue().finally(() => (running = undefined));
    return running;
  }

  const timer =
    intervalMs > 0
      ? setInterval(() => {
          round().then(
            (tables) => tables.length && log.debug({ component: 'store', tables }, 'embedded database vacuumed'),
            (err: unknown) => log.warn({ component: 'store', err }, 'vacuuming the embedded database failed; next round retries'),
          );
        }, intervalMs)
      : undefined;
  timer?.unref();

  return {
    round,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running?.catch(() => undefined);
    },
  };
}
