/** A stage of the request pipeline: does its part, then (usually) awaits `next()`. */
export type Stage<T> = (ctx: T, next: () => Promise<void>) => Promise<void>;

/**
 * Composes stages into one function, outermost first. Calling `next()` twice in a stage is a
 * programming error and throws, so a stage can never run the rest of the pipeline twice.
 */
export function compose<T>(stages: Stage<T>[]): (ctx: T) => Promise<void> {
  return function run(ctx: T): Promise<void> {
    let last = -1;
    function dispatch(i: number): Promise<void> {
      if (i <= last) return Promise.reject(new Error('next() called multiple times'));
      last = i;
      const stage = stages[i];
      if (!stage) return Promise.resolve();
      try {
        return stage(ctx, () => dispatch(i + 1));
      } catch (err) {
        return Promise.reject(err);
      }
    }
    return dispatch(0);
  };
}
