/**
 * What a turn's fold of its session costs (issue 26 item 2; docs/decisions/0099-session-snapshots.md):
 * stored snapshots loaded (used, none, of another fold version), snapshot writes and their size,
 * and the events turns read from the log. A turn that reads far more events than its own tail
 * folds the log from its start: the snapshot is missing or stale.
 */
import type { Registry } from 'prom-client';
import { CounterFamily, HistogramFamily, LATENCY_BUCKETS_S } from './cells.js';
import { METRIC_PREFIX } from './names.js';

/** The turn engine's fold observer (actors/session/log/snapshot-store.ts), implemented by metrics. */
export interface FoldMetrics {
  snapshotLoaded(result: 'hit' | 'miss' | 'stale'): void;
  snapshotWritten(seconds: number, bytes: number): void;
  eventsRead(count: number): void;
}

export function createFoldMetrics(registry: Registry): FoldMetrics {
  const p = METRIC_PREFIX;
  const loads = new CounterFamily(registry, {
    name: `${p}session_snapshot_loads_total`,
    help: 'Stored session snapshots looked up by a turn with no cached fold, by result (hit, miss, stale = other fold version).',
    labelNames: ['result'],
  });
  const load = { hit: loads.cell({ result: 'hit' }), miss: loads.cell({ result: 'miss' }), stale: loads.cell({ result: 'stale' }) };
  const writes = new HistogramFamily(registry, {
    name: `${p}session_snapshot_write_seconds`,
    help: 'Writing a session snapshot (encoding and storing), off the turn.',
    buckets: LATENCY_BUCKETS_S,
  }).cell();
  const bytes = new CounterFamily(registry, {
    name: `${p}session_snapshot_written_bytes_total`,
    help: 'Bytes of session snapshots written.',
  }).cell();
  const read = new CounterFamily(registry, {
    name: `${p}turn_log_events_read_total`,
    help: 'Events turns read from the event log to fold their session (after the cached fold or snapshot).',
  }).cell();
  return {
    snapshotLoaded: (result) => load[result].inc(),
    snapshotWritten(seconds, size) {
      writes.observe(seconds);
      bytes.inc(size);
    },
    eventsRead: (count) => read.inc(count),
  };
}
