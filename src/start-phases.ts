import type { Logger } from './log.js';

/** Runs one named phase of a start and records how long it took (the parts that take it as an option). */
export interface PhaseTimer {
  time<T>(name: string, work: () => Promise<T> | T): Promise<T>;
}

/** Runs phases without timing them: for callers that do not time a start (tests, tools). */
export const untimed: PhaseTimer = { time: async (_name, work) => work() };

/**
 * The phases of one start and their durations (issue 13 item 7): each is logged at info as
 * `start-up phase` with `ms` when it ends, so an operator sees what a slow start waited for.
 * src/main.ts creates it first thing and records the phases before the logger exists (Node's
 * own start, configuration, module loading); `attach` logs those once there is a logger.
 * Phases may run at the same time (the database and NATS), so their durations may add up to
 * more than the start took; `sinceProcessStartMs` is the wall time from the process's start.
 */
export interface StartPhases extends PhaseTimer {
  /** A phase measured elsewhere. */
  record(name: string, ms: number): void;
  /** A phase of synchronous steps: from the end of the phase before it to now. */
  lap(name: string): void;
  /** Logs the phases recorded so far, and every later one as it ends. */
  attach(log: Logger): void;
  /** Phase → ms, in the order the phases ended. */
  durations(): Record<string, number>;
  /** Milliseconds since the process started (`performance.timeOrigin`). */
  sinceProcessStartMs(): number;
  /** Runs `hook` once, just before the timed phase `name` starts (src/main.ts frees the held port before `listen`). */
  beforePhase(name: string, hook: () => Promise<void> | void): void;
}

export function createStartPhases(): StartPhases {
  const ended: [string, number][] = [];
  const hooks = new Map<string, () => Promise<void> | void>();
  let log: Logger | undefined;
  let lastEnd = performance.now();
  const report = (name: string, ms: number) => log?.info({ phase: name, ms }, 'start-up phase');
  const record = (name: string, ms: number) => {
    const rounded = Math.round(ms);
    ended.push([name, rounded]);
    lastEnd = performance.now();
    report(name, rounded);
  };
  return {
    record,
    lap: (name) => record(name, performance.now() - lastEnd),
    async time(name, work) {
      const hook = hooks.get(name);
      hooks.delete(name);
      await hook?.();
      const t0 = performance.now();
      const result = await work();
      record(name, performance.now() - t0);
      return result;
    },
    attach(logger) {
      log = logger;
      for (const [name, ms] of ended) report(name, ms);
    },
    durations: () => Object.fromEntries(ended),
    sinceProcessStartMs: () => Math.round(performance.now()),
    beforePhase: (name, hook) => void hooks.set(name, hook),
  };
}
