/**
 * The worker role: claim loops that feed claimed turns to the runner. At most `concurrency`
 * turns run at once in this process; `claimers` loops wait for work (each is one pending pull
 * on NATS, one polling claimer on the SQL queue), so an idle worker costs almost nothing.
 */
import type { TurnClaim, TurnQueue } from '../src/bus/ports.js';
import type { Logger } from '../src/log.js';
import type { TurnRunner } from './turn-runner.js';

export interface TurnWorkerOptions {
  /** Identifies this worker in claims and logs. */
  workerId: string;
  /** Turns running at once in this process (default 100). */
  concurrency: number;
  /** Parallel claim loops (default 2). */
  claimers: number;
  /** How long one claim call waits for work before looping, in ms (default 1000). */
  claimWaitMs: number;
}

export interface TurnWorkerDeps {
  turns: TurnQueue;
  runner: TurnRunner;
  log: Logger;
}

/** Pause after a failed claim (bus unreachable), in ms. */
const CLAIM_ERROR_BACKOFF_MS = 500;

export function createTurnWorker(deps: TurnWorkerDeps, opts: Partial<TurnWorkerOptions> & Pick<TurnWorkerOptions, 'workerId'>) {
  const { workerId, concurrency = 100, claimers = 2, claimWaitMs = 1_000 } = opts;
  if (concurrency < 1 || claimers < 1) throw new RangeError('concurrency and claimers must be >= 1');
  const log = deps.log.child({ component: 'turn-worker', workerId });
  const stop = new AbortController();
  const running = new Set<Promise<void>>();
  const loops: Promise<void>[] = [];
  let waiters: (() => void)[] = [];
  /** Slots taken: running turns plus claims in progress. */
  let taken = 0;

  /** Takes a slot once one is free (or the worker is stopping). */
  async function slot(): Promise<void> {
    while (taken >= concurrency && !stop.signal.aborted) {
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
    taken++;
  }

  function release(): void {
    taken--;
    const wake = waiters;
    waiters = [];
    for (const w of wake) w();
  }

  async function claimLoop(): Promise<void> {
    while (!stop.signal.aborted) {
      await slot();
      let claim: TurnClaim | null;
      try {
        claim = stop.signal.aborted ? null : await deps.turns.claim(workerId, { waitMs: claimWaitMs, signal: stop.signal });
      } catch (err) {
        release();
        if (stop.signal.aborted) return;
        log.error({ err }, 'claiming a turn failed');
        await new Promise((r) => setTimeout(r, CLAIM_ERROR_BACKOFF_MS));
        continue;
      }
      if (!claim) {
        release();
        continue;
      }
      if (stop.signal.aborted) {
        release();
        await claim.nak(0).catch(() => undefined);
        return;
      }
      const run = deps.runner.run(claim, stop.signal).finally(() => {
        running.delete(run);
        release();
      });
      running.add(run);
    }
  }

  return {
    start(): void {
      if (loops.length) return;
      for (let i = 0; i < claimers; i++) loops.push(claimLoop());
      log.info({ concurrency, claimers }, 'turn worker started');
    },
    /** Stops claiming, aborts running turns (they are given back to the queue) and waits for them. */
    async stop(): Promise<void> {
      stop.abort();
      for (const w of waiters.splice(0)) w();
      await Promise.allSettled(loops);
      await Promise.allSettled([...running]);
      log.info('turn worker stopped');
    },
    /** Turns running right now (tests, metrics). */
    get running(): number {
      return running.size;
    },
  };
}

export type TurnWorker = ReturnType<typeof createTurnWorker>;
