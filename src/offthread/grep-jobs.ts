/**
 * The jobs of the grep pool (grep-pool.ts): match a batch of texts (a file's lines, or paths)
 * against a tenant's pattern or glob, on a worker thread. A job stops by itself once it has
 * spent its budget, between two texts; one text costs at most its length × the program's size
 * (MAX_PROGRAM_SIZE, lines cut at 16,384 characters), so it overshoots by a fraction of a second
 * at most, and the pool's deadline ends a job that overshoots more.
 */
import { AppError } from '../errors.js';
import { compileGlob, compileLinearRegex } from '../patterns/index.js';

/** What the texts are matched with: a grep pattern (anywhere in the line), or a glob (whole path). */
export type GrepMatcherSpec = { regex: string; ignoreCase: boolean } | { glob: string };

export interface GrepJob {
  matcher: GrepMatcherSpec;
  /** None: the job only compiles the matcher (a 400 for a bad pattern, before any search). */
  texts: string[];
  /** Stop after this many matching texts. */
  max: number;
  /** Stop testing texts once the job has taken this long, compiling included. */
  budgetMs: number;
}

export type GrepJobReply =
  /** `hits`: indexes of the matching texts; `finished` is false when the budget ran out first. */
  { ok: true; hits: number[]; spentMs: number; finished: boolean } | { ok: false; status: number; code: string; message: string };

type Test = (text: string) => boolean;

/** Compiled matchers of this thread by spec: a search sends many batches with the same one. */
const compiled = new Map<string, Test>();
const COMPILED_MAX = 16;

function matcherOf(spec: GrepMatcherSpec): Test {
  const key = JSON.stringify(spec);
  let test = compiled.get(key);
  if (!test) {
    test = 'glob' in spec ? compileGlob(spec.glob) : compileLinearRegex(spec.regex, { ignoreCase: spec.ignoreCase }).test;
    if (compiled.size >= COMPILED_MAX) compiled.delete(compiled.keys().next().value!);
    compiled.set(key, test);
  }
  return test;
}

/** Runs one job on the calling thread; a bad or too complex pattern is a 400 reply. */
export function runGrepJob(job: GrepJob): GrepJobReply {
  const start = performance.now();
  try {
    const test = matcherOf(job.matcher);
    const hits: number[] = [];
    for (let i = 0; i < job.texts.length && hits.length < job.max; i++) {
      if (performance.now() - start > job.budgetMs) return { ok: true, hits, spentMs: performance.now() - start, finished: false };
      if (test(job.texts[i]!)) hits.push(i);
    }
    return { ok: true, hits, spentMs: performance.now() - start, finished: true };
  } catch (err) {
    if (err instanceof AppError && err.status < 500) return { ok: false, status: err.status, code: err.code, message: err.message };
    return { ok: false, status: 500, code: 'internal', message: err instanceof Error ? err.message : String(err) };
  }
}
