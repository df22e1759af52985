/**
 * A node:test reporter that prints, once the run ends, the files whose top-level tests took the
 * longest (their durations summed; a file's process start-up is not counted). The suite has a
 * time budget (CI under 25 minutes, decision 0093): this says where it goes, run after run.
 */
import { relative } from 'node:path';

const SHOWN = 15;

interface TestEvent {
  type: string;
  data: { nesting?: number; file?: string; details?: { duration_ms?: number } };
}

export default async function* slowestTestFiles(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const perFile = new Map<string, number>();
  for await (const { type, data } of source) {
    if ((type !== 'test:pass' && type !== 'test:fail') || data.nesting !== 0 || !data.file) continue;
    perFile.set(data.file, (perFile.get(data.file) ?? 0) + (data.details?.duration_ms ?? 0));
  }
  const slowest = [...perFile].sort((a, b) => b[1] - a[1]).slice(0, SHOWN);
  const total = [...perFile.values()].reduce((sum, ms) => sum + ms, 0);
  yield `\nslowest test files (top-level tests' time; ${perFile.size} files, ${(total / 60_000).toFixed(1)} min in all):\n`;
  for (const [file, ms] of slowest) yield `  ${(ms / 1000).toFixed(1).padStart(7)} s  ${relative(process.cwd(), file)}\n`;
}
