import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildNeedleSet } from '../../src/patterns/index.js';

const units = (s: string) => Array.from(s, (c) => c.charCodeAt(0));

function finds(needles: string[], text: string): string[] {
  const set = buildNeedleSet(needles.map((n) => ({ needle: units(n), label: n })));
  const out: string[] = [];
  set.scan(units(text), (start, end, label) => out.push(`${start}-${end}:${label}`));
  return out;
}

describe('needle set', () => {
  it('scans text with code units above every needle first unit (the root table ends at the highest)', () => {
    assert.deepEqual(finds(['ab', 'bc'], '€ab\uffffbc\u00e9ab'), ['1-3:ab', '4-6:bc', '7-9:ab']);
    // A needle starting with a high unit, found after lower ones and inside a needle's run.
    assert.deepEqual(finds(['a', '\uffffz'], 'a\uffffz\uffff'), ['0-1:a', '1-3:\uffffz']);
  });

  it('finds nothing with no needles, or only empty ones', () => {
    assert.deepEqual(finds([], 'anything'), []);
    assert.deepEqual(finds([''], 'anything'), []);
  });

  it('allocates no UTF-16-wide root table for few or no needles', () => {
    // Held, so nothing is collected in between: 40 builds sized for all of UTF-16 held 10 MiB.
    const before = process.memoryUsage().arrayBuffers;
    const held = Array.from({ length: 20 }, () => [buildNeedleSet([]), buildNeedleSet([{ needle: units('secret-value'), label: 'S' }])]);
    const grown = process.memoryUsage().arrayBuffers - before;
    assert.equal(held.length, 20);
    assert.ok(grown < 1024 * 1024, `array buffers grew by ${grown} bytes`);
  });
});
