/**
 * Where a compaction cuts the history (issue 26): pure. The entries up to the cut are
 * summarised, those after it stay verbatim. A cut falls between entries, and an entry holds an
 * assistant step with its tool results, so a tool call and its result are never split; an
 * entry whose calls still wait for results (a client tool) is never summarised.
 */
import type { TranscriptEntry } from '../log/transcript.js';

export interface BoundaryInput {
  entries: readonly TranscriptEntry[];
  /** Tokens of each entry (same order). */
  sizes: readonly number[];
  /** Most tokens the verbatim tail may hold. */
  keepTokens: number;
}

/**
 * The verbatim tail's budget in the entries' estimated tokens. The threshold is crossed by a
 * measured count (a tokenizer, or the vendor's calibrated figure), which can be twice the entries'
 * characters / 4 (digits, JSON, per-message framing): a tail sized by the estimate alone would keep
 * nearly the whole window, and the next compaction would come a few turns later (measured: every
 * ~35 turns at a 128k window, each cutting 7 %). So the budget shrinks by estimated / measured.
 */
export function keepBudget(window: number, keepRecentPercent: number, sizes: readonly number[], measured?: number): number {
  const budget = (window * keepRecentPercent) / 100;
  const estimated = sizes.reduce((a, b) => a + b, 0);
  const scale = measured && measured > estimated && estimated > 0 ? estimated / measured : 1;
  return Math.floor(budget * scale);
}

/** True when every call of the entry has its result. */
export function isClosed(entry: TranscriptEntry): boolean {
  if (entry.role === 'user') return true;
  return (entry.message.tool_calls ?? []).every((c) => entry.results.has(c.id));
}

/**
 * The index of the last entry to summarise, or null when nothing can be (fewer than two
 * entries, or the first entry is still open). The tail keeps the newest entries that fit
 * `keepTokens`, and always the newest one, so the request the model is about to answer stays
 * verbatim; `force` (the vendor refused the request) keeps only the newest entry.
 */
export function chooseBoundary({ entries, sizes, keepTokens }: BoundaryInput, force = false): number | null {
  if (entries.length < 2) return null;
  let cut = entries.length - 2; // summarise all but the newest
  if (!force) {
    let tail = sizes[entries.length - 1] ?? 0;
    while (cut >= 0 && tail + (sizes[cut] ?? 0) <= keepTokens) {
      tail += sizes[cut] ?? 0;
      cut--;
    }
  }
  // Only a prefix of closed entries may go.
  let lastClosed = -1;
  while (lastClosed + 1 <= cut && isClosed(entries[lastClosed + 1]!)) lastClosed++;
  cut = Math.min(cut, lastClosed);
  return cut >= 0 ? cut : null;
}
