/** A stage of the request pipeline: does its part, then (usually) awaits `next()`. */
export type Stage<T> = (ctx: T, next: () => Promise<void>) => Promise<void>;

/**
 * Composes stages into one function, outermost first. Calling `next()` twice in a stage is a
 * programming error and throws, so a stage can never run the rest of the pipeline twice.
 */
export function compose<T>(stages: Stage<T>[]): (ctx: T) => Promise<void> {
  return function run(ctx: T): Promise<void> {
    return step(stages, ctx, 0, { last: -1 });
  };
}

// A module-level function rather than a closure made per request: this runs for every request.
function step<T>(stages: Stage<T>[], ctx: T, i: number, state: { last: number }): Promise<void> {
  if (i <= state.last) return Promise.reject(new Error('next() called multiple times'));
  state.last = i;
  const stage = stages[i];
  if (!stage) return Promise.resolve();
  try {
    return stage(ctx, () => step(stages, ctx, i + 1, state));
  } catch (err) {
    return Promise.reject(err);
  }
}
