/** Command-line parsing and number formatting shared by the benchmark runners. */

/** Parses `--name v` as an integer >= 1, or throws naming the flag. */
export function positiveInt(name: string, v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got '${v}'`);
  return n;
}

/** Checks `--name v` against the allowed values, or throws naming the flag. */
export function oneOf<T extends string>(name: string, v: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(v)) throw new Error(`--${name} must be one of ${allowed.join(', ')}, got '${v}'`);
  return v as T;
}

export function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

export function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
