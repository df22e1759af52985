/**
 * Preloaded into a benchmarked service to count the SQL statements it sends, by statement text
 * (parameters are placeholders or inlined literals; digits and quoted strings are folded so one
 * statement shape is one line):
 *
 *   run.ts … --node-option=--import=<abs path>/bench/real-path/sql-counter.ts --env BENCH_SQL_LOG=/tmp/sql.json
 *
 * Every 10 s the counts so far go to $BENCH_SQL_LOG (JSON, most frequent first). Divided by the
 * turns of the run they give statements per conversation, the figure the database cuts aim at.
 */
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const file = process.env['BENCH_SQL_LOG'];
// The service resolves `pg` from its own node_modules; so does this preload (same checkout).
const pg = createRequire(`${process.cwd()}/package.json`)('pg') as { Client: { prototype: { query: (...a: unknown[]) => unknown } } };

const counts = new Map<string, number>();
const shape = (text: string) =>
  text
    .replace(/'(?:[^']|'')*'/g, "'…'")
    .replace(/\b\d+\b/g, 'N')
    .replace(/\s+/g, ' ')
    .slice(0, 160);

if (file) {
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0] as string | { text?: string } | undefined;
    const text = typeof first === 'string' ? first : (first?.text ?? '?');
    const key = shape(text);
    counts.set(key, (counts.get(key) ?? 0) + 1);
    return query.apply(this, args);
  };
  setInterval(() => {
    const sorted = [...counts].sort((a, b) => b[1] - a[1]);
    writeFileSync(file, JSON.stringify(sorted, null, 1) + '\n');
  }, 10_000).unref();
}
