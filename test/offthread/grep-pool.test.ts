import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { InvalidRequestError } from '../../src/errors.js';
import { createGrepPool, GrepTimeoutError, type GrepPool } from '../../src/offthread/index.js';

/** `length` random a's and b's (seeded): text on which RE2's DFA gives up for the NFA, line after line. */
function randomAb(length: number, seed: number): string {
  let out = '';
  for (let i = 0; i < length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    out += (seed >> 8) & 1 ? 'a' : 'b';
  }
  return out;
}

const TENANT = { org: 'org-1', key: 'session-1' };

describe('grep pool', () => {
  const pools: GrepPool[] = [];
  const pool = (opts: Parameters<typeof createGrepPool>[0]) => {
    const p = createGrepPool(opts);
    pools.push(p);
    return p;
  };
  after(() => Promise.all(pools.map((p) => p.close())));

  it('matches lines and globs on a worker, as the inline engine does', async () => {
    const search = pool({ workers: 1 }).search(TENANT);
    const lines = await search.compile({ regex: 'todo|fixme', ignoreCase: true });
    assert.deepEqual(await lines.match(['x', 'TODO: y', 'z', 'a FixMe']), [1, 3]);
    assert.deepEqual(await lines.match(['TODO', 'TODO', 'TODO'], 2), [0, 1]);
    const paths = await search.compile({ glob: 'src/**/*.ts' });
    assert.deepEqual(await paths.match(['/src/a.ts', '/src/x/b.ts', '/docs/c.ts', '/src/d.md']), [0, 1]);
  });

  it('refuses a too complex or invalid pattern with a 400 when compiling, before any line is matched', async () => {
    const search = pool({ workers: 1 }).search(TENANT);
    await assert.rejects(
      search.compile({ regex: '(?:a|ab){1000}', ignoreCase: false }),
      (e: unknown) => e instanceof InvalidRequestError && /^Pattern too complex: it compiles to 4002 instructions/.test(e.message),
    );
    await assert.rejects(search.compile({ regex: 'a(?=b)', ignoreCase: false }), (e: unknown) => e instanceof InvalidRequestError);
  });

  it("one search's batches share its time budget: past it a 422, the worker stops itself (not replaced) and the event loop stays free", async () => {
    const p = pool({ workers: 1, timeoutMs: 1500 });
    const search = p.search(TENANT);
    // 904 instructions, no match on a/b text: a few hundred ms per line, batch after batch.
    const lines = await search.compile({ regex: 'a[ab]{900}[^ab]', ignoreCase: false });
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    const start = performance.now();
    let batches = 0;
    await assert.rejects(async () => {
      for (let seed = 1; seed < 100; seed++, batches++) await lines.match([randomAb(16_384, seed)]);
    }, GrepTimeoutError);
    clearInterval(ticker);
    const ms = performance.now() - start;
    assert.ok(batches >= 1, `${batches} batches finished within the budget`);
    // The budget, plus the overshoot of one line and the event loop's share of the machine.
    assert.ok(ms < 6000, `took ${ms.toFixed(0)} ms over ${batches} batches`);
    assert.ok(ticks >= ms / 10 / 3, `the event loop ticked ${ticks} times in ${ms.toFixed(0)} ms`);
    assert.equal(p.stats().replaced, 0);
    // Spent: the same search refuses at once; a new search has its own budget.
    await assert.rejects(lines.match(['a']), GrepTimeoutError);
    assert.deepEqual(await (await p.search(TENANT).compile({ regex: 'b', ignoreCase: false })).match(['a', 'b']), [1]);
  });
});
