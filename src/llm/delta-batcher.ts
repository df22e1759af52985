/** Default batching window of streamed deltas (spec 6.1: about 100 ms). */
export const DEFAULT_DELTA_BATCH_INTERVAL_MS = 100;

export interface DeltaBatch {
  /** Text added since the previous batch. */
  delta: string;
  /** All text so far, this batch included. */
  accumulated: string;
}

export interface DeltaBatcherOptions {
  /** Window in ms between the first unsent delta and its batch (default 100). */
  intervalMs: number;
  onBatch: (batch: DeltaBatch) => void;
  /** Injected for tests; default global timers. */
  setTimer: (fn: () => void, ms: number) => unknown;
  clearTimer: (handle: unknown) => void;
}

export interface DeltaBatcher {
  push(text: string): void;
  /** Emits pending text now (call at stream end, before the completed event). */
  flush(): void;
  /** Cancels a pending timer without emitting. */
  close(): void;
  readonly accumulated: string;
}

/**
 * Batches streamed text deltas: the first delta after a quiet period opens a window of
 * `intervalMs`; everything pushed within it goes out as one `{delta, accumulated}` batch.
 * A stalled stream still flushes within one window. Empty deltas are ignored.
 */
export function createDeltaBatcher(opts: Partial<DeltaBatcherOptions> & Pick<DeltaBatcherOptions, 'onBatch'>): DeltaBatcher {
  const {
    intervalMs = DEFAULT_DELTA_BATCH_INTERVAL_MS,
    onBatch,
    setTimer = (fn, ms) => setTimeout(fn, ms),
    clearTimer = (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
  } = opts;
  let accumulated = '';
  let pending = '';
  let timer: unknown;
  const emit = () => {
    if (timer !== undefined) clearTimer(timer);
    timer = undefined;
    if (!pending) return;
    const delta = pending;
    pending = '';
    onBatch({ delta, accumulated });
  };
  return {
    push(text) {
      if (!text) return;
      pending += text;
      accumulated += text;
      if (timer === undefined) timer = setTimer(emit, intervalMs);
    },
    flush: emit,
    close() {
      if (timer !== undefined) clearTimer(timer);
      timer = undefined;
    },
    get accumulated() {
      return accumulated;
    },
  };
}
