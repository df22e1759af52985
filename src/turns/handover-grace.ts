import type { NewEvent, TurnClaim } from '../bus/ports.js';
import { INTERRUPTED_TOOL_ERROR } from './turn-events.js';

/** How long a takeover waits for a live predecessor's tool results before recording "interrupted", in ms. */
export const DEFAULT_HANDOVER_GRACE_MS = 3_000;
/** The log is read this often meanwhile, in ms. */
const HANDOVER_POLL_MS = 200;

/** True when `events` record a tool call as interrupted (the decider's answer to a started call with no result). */
export function recordsInterrupted(events: readonly NewEvent[]): boolean {
  return events.some((e) => e.type === 'tool.completed' && e.data?.['error'] === INTERRUPTED_TOOL_ERROR);
}

export interface HandoverGraceOptions {
  claim: Pick<TurnClaim, 'tookOverFromLive'>;
  /** Reads what other writers appended since. */
  sync(): Promise<void>;
  /** Tool results in the log so far (a handed-over one raises it). */
  results(): number;
  signal: AbortSignal;
  graceMs?: number;
}

/**
 * Before a takeover records a started tool as interrupted: if the delivery it took the turn from
 * still lives (its lease ran out in a NATS election, its heartbeats lost), that worker may hold
 * the tool's result and hand it over through the log (turn-log.ts), once its stream has a leader
 * again. Both sides wait on the same election and then race, and the successor's decision won
 * about as often as not in the chaos suite (succeeded tools recorded "interrupted"): here it
 * waits up to `graceMs`, reading the log, until a result appears. A dead predecessor (an instance
 * SIGKILLed mid-tool) answers nothing at once, so a crash's recovery does not wait.
 */
export async function awaitHandover(o: HandoverGraceOptions): Promise<void> {
  if (!(await o.claim.tookOverFromLive?.().catch(() => false))) return;
  const before = o.results();
  const deadline = Date.now() + (o.graceMs ?? DEFAULT_HANDOVER_GRACE_MS);
  while (Date.now() < deadline && !o.signal.aborted) {
    await new Promise((r) => setTimeout(r, HANDOVER_POLL_MS));
    await o.sync().catch(() => undefined); // an outage ends the grace no sooner than its time
    if (o.results() > before) return;
  }
}
