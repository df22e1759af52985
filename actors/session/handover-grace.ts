import type { NewSessionEvent } from '../../schemas/events.js';
import type { Presence, TurnClaim } from '../../src/bus/index.js';
import { INTERRUPTED_TOOL_ERROR } from '../../src/turns/index.js';

/** How long a takeover waits for a live predecessor's tool results before recording "interrupted", in ms. */
export const DEFAULT_HANDOVER_GRACE_MS = 3_000;
/**
 * How long it waits for a predecessor that neither answers nor is gone, in ms: a frozen process
 * (SIGSTOP, a VM steal, a long GC pause) or one on a stalled NATS node, which may wake with a
 * tool's result in hand. Past this, its outcome counts as unknown.
 */
export const DEFAULT_SILENT_GRACE_MS = 30_000;
/** The log is read this often meanwhile, in ms. */
const HANDOVER_POLL_MS = 200;
/** A silent predecessor is asked again this often, in ms. */
const PRESENCE_RECHECK_MS = 1_000;

/** True when `events` record a tool call as interrupted (the decider's answer to a started call with no result). */
export function recordsInterrupted(events: readonly NewSessionEvent[]): boolean {
  return events.some((e) => e.type === 'tool.completed' && !e.data.success && e.data.error === INTERRUPTED_TOOL_ERROR);
}

export interface HandoverGraceOptions {
  claim: Pick<TurnClaim, 'predecessor'>;
  /** Reads what other writers appended since. */
  sync(): Promise<void>;
  /** Tool results in the log so far (a handed-over one raises it). */
  results(): number;
  signal: AbortSignal;
  graceMs?: number;
  silentGraceMs?: number;
}

/**
 * Before a takeover records a started tool as interrupted: if the delivery it took the turn from
 * still lives (its lease ran out in a NATS election, its heartbeats lost, or its process froze),
 * that worker may hold the tool's result and hand it over through the log (turn-log.ts) when it
 * can write again. Both sides race, and the successor's decision won about as often as not in
 * the chaos suite (succeeded tools recorded "interrupted"): here it waits, reading the log, until
 * a result appears — up to `graceMs` once the predecessor answers, up to `silentGraceMs` while it
 * is silent. A dead predecessor (an instance SIGKILLed mid-tool) is known gone at once, so a
 * crash's recovery does not wait.
 */
export async function awaitHandover(o: HandoverGraceOptions): Promise<void> {
  const ask = async (): Promise<Presence> => (await o.claim.predecessor?.().catch(() => 'silent' as const)) ?? 'gone';
  let presence = await ask();
  if (presence === 'gone') return;
  const before = o.results();
  const start = Date.now();
  const silentUntil = start + (o.silentGraceMs ?? DEFAULT_SILENT_GRACE_MS);
  const graceMs = o.graceMs ?? DEFAULT_HANDOVER_GRACE_MS;
  let deadline = presence === 'alive' ? start + graceMs : silentUntil;
  let askedAt = start;
  while (Date.now() < deadline && !o.signal.aborted) {
    await new Promise((r) => setTimeout(r, HANDOVER_POLL_MS));
    await o.sync().catch(() => undefined); // an outage ends the grace no sooner than its time
    if (o.results() > before) return;
    if (presence !== 'silent' || Date.now() - askedAt < PRESENCE_RECHECK_MS) continue;
    askedAt = Date.now();
    presence = await ask();
    if (presence === 'gone') return;
    // Awake again: it writes its result within the usual grace, or has none to write.
    if (presence === 'alive') deadline = Math.min(silentUntil, Date.now() + graceMs);
  }
}
