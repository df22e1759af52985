/**
 * Session snapshots in the database (table session_snapshots, migration 0026;
 * docs/decisions/0099-session-snapshots.md): the transcript folded up to an event, so that a turn
 * on any instance, after any restart, reads the snapshot and the events after it instead of the
 * whole log. Refreshed once the log has grown by `refreshInterval` since the last one, written
 * after the turn is settled (never awaited by it); a write that fails only costs the next cold
 * turn a longer tail.
 */
import type { Store } from '../../../src/db/index.js';
import { preparedSql } from '../../../src/db/index.js';
import type { Logger } from '../../../src/log.js';
import { decodeTranscript, encodeTranscript, FOLD_VERSION } from './snapshot-codec.js';
import type { Transcript } from './transcript.js';

/** What a snapshot lookup found: used, none stored, or one of another fold version (ignored). */
export type SnapshotLoadResult = 'hit' | 'miss' | 'stale';

/** Where the fold's reads are counted (metrics; tests assert them). */
export interface FoldObserver {
  snapshotLoaded?(result: SnapshotLoadResult): void;
  snapshotWritten?(seconds: number, bytes: number): void;
  /** Events a turn's log view read from the event log (tail reads, not the snapshot). */
  eventsRead?(count: number): void;
}

export interface SnapshotStoreOptions {
  /** Events the log may grow by past the stored snapshot before a new one is written (0: never write). */
  intervalEvents: number;
}

/** A transcript from a snapshot, and the sequence it was stored at. */
export interface LoadedSnapshot {
  transcript: Transcript;
  sequence: number;
}

const LOAD = preparedSql('session-snapshot.load', 'select version, sequence, body from session_snapshots where session_id = ?');

/** Replaces an older snapshot (or one of another version); a newer one stays (writes may finish out of order). */
const SAVE = preparedSql(
  'session-snapshot.save',
  `insert into session_snapshots (session_id, version, sequence, body) values (?, ?, ?, ?)
   on conflict (session_id) do update set version = excluded.version, sequence = excluded.sequence, body = excluded.body, updated_at = now()
   where session_snapshots.sequence < excluded.sequence or session_snapshots.version <> excluded.version`,
);

/**
 * Events past the stored snapshot before the next is written: the operator's interval, or as many
 * events as the transcript has entries when that is more. A write encodes and stores the whole
 * transcript, so a fixed interval made each turn pay a share that grew with the history (a 5,000-
 * turn session spent ~14 ms of its ~75 ms turn writing ~600 KB every ~13 turns); scaled, a turn
 * pays about the same per event whatever the history, and a cold turn's tail stays bounded by the
 * transcript, which compaction bounds.
 */
export function refreshInterval(intervalEvents: number, transcript: Transcript): number {
  return Math.max(intervalEvents, transcript.entries.length);
}

export function createSnapshotStore(store: Store, log: Logger, o: SnapshotStoreOptions, observer: FoldObserver = {}) {
  /**
   * Sessions with a write in flight, and the newest transcript a turn that ended meanwhile left to
   * write after it (null: none). Without it, a turn ending during a slow write left the snapshot
   * behind until the session's next turn.
   */
  const writing = new Map<string, Transcript | null>();

  async function load(sessionId: string): Promise<LoadedSnapshot | undefined> {
    const [row] = await store.sql<{ version: number; sequence: number; body: string }>(LOAD, [sessionId]);
    if (!row) {
      observer.snapshotLoaded?.('miss');
      return undefined;
    }
    const transcript = row.version === FOLD_VERSION ? decodeTranscript(row.body) : null;
    if (!transcript || transcript.sequence !== row.sequence) {
      observer.snapshotLoaded?.('stale');
      return undefined;
    }
    observer.snapshotLoaded?.('hit');
    return { transcript, sequence: row.sequence };
  }

  async function write(sessionId: string, transcript: Transcript): Promise<void> {
    const started = performance.now();
    const body = encodeTranscript(transcript);
    await store.sql(SAVE, [sessionId, FOLD_VERSION, transcript.sequence, body]);
    observer.snapshotWritten?.((performance.now() - started) / 1000, body.length);
  }

  /**
   * Writes a snapshot of `transcript` in the background when the log grew by the interval since
   * `storedAt`; returns the sequence the stored snapshot will be at. While a write of the session
   * is in flight, the newest transcript waits for it (the ones in between are never written). A
   * session deleted meanwhile refuses the row (foreign key): nothing to keep.
   */
  function refresh(sessionId: string, transcript: Transcript, storedAt: number): number {
    if (o.intervalEvents <= 0 || transcript.sequence - storedAt < refreshInterval(o.intervalEvents, transcript)) return storedAt;
    if (writing.has(sessionId)) {
      writing.set(sessionId, transcript);
      return transcript.sequence;
    }
    writing.set(sessionId, null);
    // After the current macrotask: the turn's ack and the next claim go first.
    setImmediate(() => void writeQueued(sessionId, transcript));
    return transcript.sequence;
  }

  /** Writes `first`, then the newest transcript queued while each write ran. */
  async function writeQueued(sessionId: string, first: Transcript): Promise<void> {
    for (let next: Transcript | null = first; next; next = writing.get(sessionId) ?? null) {
      writing.set(sessionId, null);
      await write(sessionId, next).catch((err: unknown) =>
        log.warn({ err, sessionId }, 'storing the session snapshot failed; the next cold turn reads a longer tail'),
      );
    }
    writing.delete(sessionId);
  }

  return {
    load,
    refresh,
    /** Writes now (tests, and an operator's rebuild); resolves once stored. */
    write,
  };
}

export type SnapshotStore = ReturnType<typeof createSnapshotStore>;
