/** A turn as the API reads it from the log: its identity, its events and its usage so far. */
import type { SessionEvent } from '../../../schemas/events.js';
import type { BusReader } from '../../bus/index.js';
import { ConflictError } from '../../errors.js';
import { addUsage, ZERO_USAGE, type TurnRef, type Usage } from '../../turns/index.js';
import { retryPolicies, waitUntil } from '../../retry/index.js';

const READ_PAGE = 1000;

export interface TurnSoFar {
  turn: TurnRef;
  usage: Usage;
  events: SessionEvent[];
  lastSequence: number;
  startedBy: string | undefined;
}

/** The turn's identity and usage so far, from its events (turn.started's id is the turn id). */
export async function readTurnSoFar(
  bus: Pick<BusReader<SessionEvent>, 'events'>,
  sessionId: string,
  turnId: string,
  waitForStart = false,
): Promise<TurnSoFar | null> {
  const started = await startedEvent(bus, sessionId, turnId, waitForStart);
  if (!started) return null;
  const events: SessionEvent[] = [started];
  for (let after = started.sequence; ; ) {
    const page = await bus.events.read(sessionId, { afterSequence: after, limit: READ_PAGE });
    events.push(...page);
    if (page.length < READ_PAGE) break;
    after = page.at(-1)!.sequence;
  }
  let usage = ZERO_USAGE;
  for (const e of events) {
    if (e.context.turn_id !== turnId) continue;
    if (e.type === 'llm.generation') usage = addUsage(usage, e.data.usage);
    // A sub-agent's child turn counts in this turn's usage (turn-state.ts).
    else if (e.type === 'tool.completed' && e.data.usage) usage = addUsage(usage, e.data.usage);
    // A summary call of the turn counts too (turn-state.ts).
    else if (e.type === 'session.compacted') usage = addUsage(usage, e.data.usage);
  }
  const start = started;
  if (start.type !== 'turn.started') throw new ConflictError('The turn has not started yet');
  const turn: TurnRef = { turn_id: turnId, input_message_id: start.data.input_message_id };
  if (started.tags?.length) turn.tags = [...started.tags];
  const startedBy = start.data.user_id;
  return { turn, usage, events, lastSequence: events.at(-1)!.sequence, startedBy };
}

/**
 * `turn.started` (its id is the turn id); with `waitForStart`, waited for (retryPolicies.turnStartedStored):
 * a turn that began is about to store it (its worker asked the row first, then appends).
 */
export async function startedEvent(
  bus: Pick<BusReader<SessionEvent>, 'events'>,
  sessionId: string,
  turnId: string,
  waitForStart: boolean,
): Promise<SessionEvent | null> {
  let started: SessionEvent | null = null;
  const find = async () => (started = await bus.events.findById(sessionId, turnId)) !== null;
  if (!waitForStart) await find();
  else await waitUntil(find, retryPolicies.turnStartedStored);
  return started;
}
