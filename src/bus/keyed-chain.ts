/** Runs tasks one at a time per key, in call order; different keys run concurrently. */
export function createKeyedChain() {
  const tails = new Map<string, Promise<void>>();
  return {
    run<T>(key: string, task: () => Promise<T>): Promise<T> {
      const result = (tails.get(key) ?? Promise.resolve()).then(task);
      // The tail never rejects, so one failed task does not poison the ones queued behind it.
      const tail = result.then(
        () => undefined,
        () => undefined,
      );
      tails.set(key, tail);
      void tail.then(() => {
        if (tails.get(key) === tail) tails.delete(key);
      });
      return result;
    },
    /** Keys with work queued or running (for tests and metrics). */
    get size(): number {
      return tails.size;
    },
  };
}

export type KeyedChain = ReturnType<typeof createKeyedChain>;
