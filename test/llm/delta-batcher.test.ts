import assert from 'node:assert/strict';
import { describe, mock, test } from 'node:test';
import { createDeltaBatcher, type DeltaBatch } from '../../src/llm/index.js';

describe('delta batcher', () => {
  test('delta batcher - 2,000 tokens over 1,000 ms (mock clock) give exactly 10 batches of 100 ms', () => {
    mock.timers.enable({ apis: ['setTimeout'] });
    try {
      const batches: DeltaBatch[] = [];
      const batcher = createDeltaBatcher({ onBatch: (b) => batches.push(b) });
      let final = '';
      for (let ms = 0; ms < 1000; ms++) {
        for (const t of [`a${ms} `, `b${ms} `]) {
          batcher.push(t);
          final += t;
        }
        mock.timers.tick(1);
      }
      batcher.flush();
      assert.equal(batches.length, 10);
      assert.equal(batches.at(-1)!.accumulated, final);
      assert.equal(batches.map((b) => b.delta).join(''), final);
      assert.equal(batcher.accumulated, final);
    } finally {
      mock.timers.reset();
    }
  });

  test('delta batcher - real timers: a 2,000-token stream over N ms yields about N/100 batches', async () => {
    const batches: DeltaBatch[] = [];
    const batcher = createDeltaBatcher({ onBatch: (b) => batches.push(b) });
    const started = Date.now();
    let final = '';
    for (let tick = 0; tick < 100; tick++) {
      for (let i = 0; i < 20; i++) {
        const t = `t${tick}.${i} `;
        batcher.push(t);
        final += t;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    const elapsed = Date.now() - started;
    batcher.flush();
    const expected = elapsed / 100;
    assert.ok(
      batches.length >= Math.floor(expected) - 1 && batches.length <= Math.ceil(expected) + 1,
      `${batches.length} batches over ${elapsed} ms`,
    );
    assert.equal(batches.at(-1)!.accumulated, final);
  });

  test('delta batcher - flush emits pending text at once; empty deltas and empty flushes emit nothing', () => {
    const batches: DeltaBatch[] = [];
    const batcher = createDeltaBatcher({ onBatch: (b) => batches.push(b), intervalMs: 10_000 });
    batcher.push('');
    batcher.flush();
    assert.equal(batches.length, 0);
    batcher.push('Hel');
    batcher.push('lo');
    batcher.flush();
    batcher.push('!');
    batcher.flush();
    batcher.close();
    assert.deepEqual(batches, [
      { delta: 'Hello', accumulated: 'Hello' },
      { delta: '!', accumulated: 'Hello!' },
    ]);
  });
});
