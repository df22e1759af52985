/** What a load loop asks of the window it runs in. */
export interface WindowState {
  /** A sample taken now counts (the warm-up is over and the window not yet closed). */
  readonly measuring: boolean;
  /** The window closed: the loop should end. */
  readonly stopping: boolean;
}

/**
 * Starts the load loops, lets them warm up for `warmupS`, then counts what they complete in a
 * window of `durationS` (announced on stdout as `{"phase":"measure"}` / `{"phase":"done"}`, so the
 * runner samples CPU over the same window), stops them and waits up to `drainMs` for them to end.
 * Returns the measured window's length in seconds.
 */
export async function runMeasuredWindow(
  { warmupS, durationS, drainMs }: { warmupS: number; durationS: number; drainMs: number },
  startLoops: (state: WindowState) => Promise<unknown>[],
): Promise<number> {
  const state = { measuring: false, stopping: false };
  const loops = startLoops(state);
  await new Promise((r) => setTimeout(r, warmupS * 1000));
  state.measuring = true;
  process.stdout.write('{"phase":"measure"}\n');
  const start = performance.now();
  await new Promise((r) => setTimeout(r, durationS * 1000));
  state.measuring = false;
  const elapsed = (performance.now() - start) / 1000;
  process.stdout.write('{"phase":"done"}\n');
  state.stopping = true;
  await Promise.race([Promise.all(loops), new Promise((r) => setTimeout(r, drainMs))]);
  return elapsed;
}
