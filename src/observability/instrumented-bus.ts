/**
 * A Bus decorator that reports turn claims, their completion and event appends to observers
 * (task counts for the timeseries, Prometheus metrics), so the turn engine itself carries no
 * instrumentation. Applied once, in the composition root; everything else passes through.
 */
import { performance } from 'node:perf_hooks';
import type { NewSessionEvent, SessionEvent } from '../../schemas/events.js';
import type { AppendOptions, AppendResult, Bus, EventLog, TurnClaim, TurnQueue } from '../bus/index.js';

export interface BusObserver {
  /** This instance's worker claimed a turn (first delivery or a redelivery). */
  claimed?(claim: TurnClaim): void;
  /** The claim was settled as done (acknowledged); reported once per claim. */
  completed?(claim: TurnClaim): void;
  /** One append call: the events as handed in, its duration in seconds, and its result (undefined when it threw). */
  appended?(events: readonly NewSessionEvent[], seconds: number, result: AppendResult<SessionEvent> | undefined): void;
}

/** The bus with `observer` told about claims, completions and appends; `bus` itself is unchanged. */
export function instrumentBus(bus: Bus<SessionEvent>, observer: BusObserver): Bus<SessionEvent> {
  return {
    ...bus,
    events: observer.appended ? observeAppends(bus.events, observer.appended) : bus.events,
    turns: observeClaims(bus.turns, observer),
  };
}

function observeAppends(log: EventLog<SessionEvent>, appended: NonNullable<BusObserver['appended']>): EventLog<SessionEvent> {
  const append = (sessionId: string, events: NewSessionEvent[], opts?: AppendOptions): Promise<AppendResult<SessionEvent>> => {
    const started = performance.now();
    return log.append(sessionId, events, opts).then(
      (result) => {
        appended(events, (performance.now() - started) / 1000, result);
        return result;
      },
      (err: unknown) => {
        appended(events, (performance.now() - started) / 1000, undefined);
        throw err;
      },
    );
  };
  // The log's other methods (and optional ones such as `settled`) stay the log's own.
  return Object.assign(Object.create(log) as EventLog<SessionEvent>, { append });
}

function observeClaims(queue: TurnQueue, observer: BusObserver): TurnQueue {
  if (!observer.claimed && !observer.completed) return queue;
  const claim: TurnQueue['claim'] = async (workerId, opts) => {
    const c = await queue.claim(workerId, opts);
    if (!c) return c;
    observer.claimed?.(c);
    return observer.completed ? withCompletion(c, observer.completed) : c;
  };
  return Object.assign(Object.create(queue) as TurnQueue, { claim });
}

function withCompletion(c: TurnClaim, completed: (claim: TurnClaim) => void): TurnClaim {
  let done = false;
  const predecessor = c.predecessor?.bind(c);
  return {
    turn: c.turn,
    deliveryCount: c.deliveryCount,
    heartbeat: () => c.heartbeat(),
    async ack() {
      await c.ack();
      if (done) return;
      done = true;
      completed(c);
    },
    nak: (delayMs) => c.nak(delayMs),
    isCurrent: () => c.isCurrent(),
    ...(predecessor ? { predecessor } : {}),
  };
}
