/**
 * What keeps a running attempt in touch: the claim's heartbeat (a third of the lease), a poll
 * of the log for other writers' events (the API's cancel, client results), and the session's
 * signals (a cancel syncs the log at once; a delete stops the attempt).
 */
import type { Signals, TurnClaim } from '../../src/bus/index.js';
import type { Logger } from '../../src/log.js';
import { TurnStoppedError } from '../../src/turns/index.js';
import type { TurnLog } from './log/turn-log.js';

export interface AttemptWatch {
  claim: Pick<TurnClaim, 'heartbeat' | 'turn'>;
  signals: Signals;
  log: Logger;
  leaseMs: number;
  pollMs: number;
}

/** Starts watching; returns what stops it. `stop` is called when the session is deleted. */
export function watchAttempt(w: AttemptWatch, turnLog: TurnLog, stop: (reason: Error) => void): () => void {
  const timers: NodeJS.Timeout[] = [];
  const every = (ms: number, fn: () => Promise<unknown>, what: string) => {
    const t = setInterval(() => void fn().catch((err: unknown) => w.log.warn({ err }, what)), ms);
    t.unref();
    timers.push(t);
  };
  every(Math.max(100, Math.floor(w.leaseMs / 3)), () => w.claim.heartbeat(), 'claim heartbeat failed');
  every(w.pollMs, () => turnLog.syncIfBehind(), 'log poll failed');
  const unsubscribe = w.signals.subscribe(w.claim.turn.session_id, (signal) => {
    if (signal.type === 'deleted') stop(new TurnStoppedError('session_deleted'));
    else if (signal.type === 'cancel') void turnLog.sync().catch((err: unknown) => w.log.warn({ err }, 'log sync on cancel failed'));
  });
  return () => {
    for (const t of timers) clearInterval(t);
    unsubscribe();
  };
}
