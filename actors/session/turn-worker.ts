/**
 * The worker role: claim loops that feed claimed turns to the runner. At most `concurrency`
 * turns run at once in this process; `claimers` loops wait for work (each is one pending pull
 * on NATS, one polling claimer on the SQL queue), so an idle worker costs almost nothing.
 */
import type { TurnClaim, TurnQueue } from '../../src/bus/index.js';
import type { Logger } from '../../src/log.js';
import { retrier, retryPolicies, type Retrier } from '../../src/retry/index.js';
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

/** How long `stop()` lets running turns drain before aborting them, in ms. */
export const DEFAULT_STOP_GRACE_MS = 10_000;

export function createTurnWorker(deps: TurnWorkerDeps, opts: Partial<TurnWorkerOptions> & Pick<TurnWorkerOptions, 'workerId'>) {
  const { workerId, concurrency = 100, claimers = 2, claimWaitMs = 1_000 } = opts;
  if (concurrency < 1 || claimers < 1) throw new RangeError('concurrency and claimers must be >= 1');
  const log = deps.log.child({ component: 'turn-worker', workerId });
  /** Stop claiming; running turns drain (stop at their next step, tools finish). */
  const stop = new AbortController();
  /** The shutdown window ran out: running turns stop at once. */
  const kill = new AbortController();
  const running = new Set<Promise<void>>();
  const loops: Promise<void>[] = [];
  let waiters: (() => void)[] = [];
  /** Slots taken: running turns plus claims in progress. */
  let taken = 0;
  /** Drained by an operator: no new claims; running turns go on. */
  let paused = false;
  let unpause: (() => void)[] = [];

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
    // Failed claims in a row back off (retryPolicies.turnClaim); a claim that answers starts afresh.
    let claimErrors: Retrier | undefined;
    while (!stop.signal.aborted) {
      while (paused && !stop.signal.aborted) await new Promise<void>((resolve) => unpause.push(resolve));
      if (stop.signal.aborted) return;
      await slot();
      let claim: TurnClaim | null;
      try {
        claim = stop.signal.aborted ? null : await deps.turns.claim(workerId, { waitMs: claimWaitMs, signal: stop.signal });
      } catch (err) {
        release();
        if (stop.signal.aborted) return;
        log.error({ err }, 'claiming a turn failed');
        await (claimErrors ??= retrier(retryPolicies.turnClaim, { signal: stop.signal })).failed(err).catch(() => undefined);
        continue;
      }
      claimErrors = undefined;
      if (!claim) {
        release();
        continue;
      }
      if (stop.signal.aborted || paused) {
        // Claimed while stopping or pausing: give it straight back to another worker.
        release();
        await claim.nak(0).catch(() => undefined);
        continue;
      }
      const run = deps.runner.run(claim, { drain: stop.signal, abort: kill.signal }).finally(() => {
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
    /**
     * Stops claiming and drains: running turns stop at their next step boundary and go back to
     * the queue, but a running tool finishes and its result is stored. Whatever still runs
     * after `graceMs` (default 10000) is aborted. Resolves when every turn has settled.
     */
    async stop({ graceMs = DEFAULT_STOP_GRACE_MS }: { graceMs?: number } = {}): Promise<void> {
      stop.abort();
      for (const w of waiters.splice(0)) w();
      for (const w of unpause.splice(0)) w();
      await Promise.allSettled(loops);
      let timer: NodeJS.Timeout | undefined;
      const graceOver = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), graceMs)));
      const drained = Promise.allSettled([...running]).then(() => 'drained' as const);
      if ((await Promise.race([drained, graceOver])) === 'timeout') {
        log.warn({ running: running.size, graceMs }, 'shutdown window ran out; aborting running turns');
        kill.abort();
        await Promise.allSettled([...running]);
      }
      clearTimeout(timer);
      log.info('turn worker stopped');
    },
    /** Stops claiming turns (drain); running turns go on to their end. */
    pause(): void {
      if (!paused) log.info({ running: running.size }, 'turn worker paused: no new claims');
      paused = true;
    },
    /** Claims turns again after `pause`. */
    resume(): void {
      if (paused) log.info('turn worker resumed');
      paused = false;
      const wake = unpause;
      unpause = [];
      for (const w of wake) w();
    },
    get paused(): boolean {
      return paused;
    },
    /** Turns running right now (tests, metrics). */
    get running(): number {
      return running.size;
    },
  };
}

export type TurnWorker = ReturnType<typeof createTurnWorker>;
