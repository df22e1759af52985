import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { ToolError } from '../../src/capabilities/index.js';
import { renderBody } from '../../src/capabilities/web-fetch/content.js';
import { InvalidRequestError, ServiceUnavailableError } from '../../src/errors.js';
import { htmlConverterOf } from '../../src/capabilities/index.js';
import { createParsePool, ParseLimitError, type ParsePool } from '../../src/offthread/index.js';

describe('parse pool', () => {
  const pools: ParsePool[] = [];
  const pool = (opts: Parameters<typeof createParsePool>[0]) => {
    const p = createParsePool(opts);
    pools.push(p);
    return p;
  };
  after(() => Promise.all(pools.map((p) => p.close())));

  it('converts HTML in a worker, as the inline converter does', async () => {
    const convert = htmlConverterOf(pool({ workers: 1, timeoutMs: 5000 }));
    const page = Buffer.from('<html><body><h2>Title</h2><ul><li>one</li><li>two</li></ul></body></html>');
    assert.deepEqual(await renderBody(page, 'text/html', 'markdown', convert), { kind: 'html', content: '## Title\n\n* one\n* two' });
    assert.deepEqual(await renderBody(page, 'text/html', 'text', convert), { kind: 'html', content: 'Title\none\ntwo' });
  });

  it('stops 1 MB of unclosed nested tags at the deadline with a tool error; the event loop stays free and the pool recovers', async () => {
    const p = pool({ workers: 1, timeoutMs: 500 });
    const convert = htmlConverterOf(p);
    assert.equal(await convert('<p>warm</p>', 'markdown'), 'warm');
    // Measured inline: 10 KB of `<b>` took ~10 s in node-html-parser; 1 MB would take hours.
    const hostile = `<html><body>${'<b>'.repeat(350_000)}</body></html>`;
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 10);
    const start = performance.now();
    await assert.rejects(
      convert(hostile, 'markdown'),
      (e: unknown) => e instanceof ToolError && /too large or too complex to convert \(stopped after 0\.5 s\)/.test(e.message),
    );
    clearInterval(ticker);
    const ms = performance.now() - start;
    assert.ok(ms < 2500, `took ${ms.toFixed(0)} ms`);
    assert.ok(ticks >= ms / 10 / 3, `the event loop ticked ${ticks} times in ${ms.toFixed(0)} ms`);
    assert.equal(p.stats().replaced, 1);
    assert.equal(await convert('<p>after</p>', 'text'), 'after');
  });

  it('a worker out of heap fails its job with a memory ParseLimitError and is replaced', async () => {
    const p = pool({ workers: 1, timeoutMs: 20_000, memoryMb: 32 });
    const html = `<div>${'<p class="a b c" id="x">text</p>'.repeat(400_000)}</div>`;
    await assert.rejects(
      p.run({ kind: 'html', html, format: 'markdown' }),
      (e: unknown) => e instanceof ParseLimitError && e.reason === 'memory',
    );
    assert.equal(await p.run({ kind: 'html', html: '<i>ok</i>', format: 'markdown' }), '_ok_');
  });

  it('caller errors come back as the same 400s; a full queue is a 503; close fails waiting jobs', async () => {
    const p = pool({ workers: 1, timeoutMs: 5000, queueMax: 1 });
    await assert.rejects(
      p.run({ kind: 'agent-definition', raw: Buffer.from('a: [1'), contentType: 'application/yaml' }),
      (e: unknown) => e instanceof InvalidRequestError && /malformed YAML/.test(e.message),
    );
    assert.equal(
      await p.run({ kind: 'json-schemas', schemas: [{ type: 'object' }, { type: 'object', properties: { a: { type: 'nope' } } }] }),
      1,
    );
    const running = p.run({ kind: 'html', html: '<b>'.repeat(20_000), format: 'markdown' });
    const waiting = p.run({ kind: 'html', html: '<i>x</i>', format: 'markdown' });
    await assert.rejects(p.run({ kind: 'html', html: '<i>y</i>', format: 'markdown' }), ServiceUnavailableError);
    const failed = Promise.all([assert.rejects(running, ServiceUnavailableError), assert.rejects(waiting, ServiceUnavailableError)]);
    await p.close();
    await failed;
  });
});
