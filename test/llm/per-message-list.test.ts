import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { deriveMessages, perMessageList, type LlmMessage } from '../../src/llm/index.js';

const user = (text: string): LlmMessage => ({ role: 'user', content: [{ type: 'text', text }] });
const textOf = (m: LlmMessage) => (m.role === 'user' && typeof m.content !== 'string' ? (m.content[0] as { text: string }).text : '');

/** A running value that names the whole prefix: a wrong position shows as a wrong string. */
function running() {
  let computed = 0;
  const values = perMessageList<string>((m, before) => {
    computed++;
    return before === undefined ? textOf(m) : `${before}|${textOf(m)}`;
  });
  return { values, computed: () => computed };
}
const all = (v: { length: number; at(i: number): string | undefined }) => Array.from({ length: v.length }, (_, i) => v.at(i));
const expected = (list: LlmMessage[]) =>
  list.map((_, i) =>
    list
      .slice(0, i + 1)
      .map(textOf)
      .join('|'),
  );

describe('perMessageList (issue 26)', () => {
  const history = Array.from({ length: 50 }, (_, i) => user(`m${i}`));

  it('a list derived from the last one computes only its new positions, in the same store', () => {
    const r = running();
    const a = history.slice(0, 40);
    assert.deepEqual(all(r.values(a)), expected(a));
    const b = history.slice(0, 45);
    deriveMessages(b, a, 40);
    const before = r.computed();
    assert.deepEqual(all(r.values(b)), expected(b));
    assert.equal(r.computed() - before, 5);
    assert.deepEqual(all(r.values(a)), expected(a), 'the first list reads its own positions still');
  });

  it('a second list derived from the same one shares what the first computed for the same messages', () => {
    const r = running();
    const a = history.slice(0, 40);
    r.values(a);
    const b = history.slice(0, 44);
    const c = history.slice(0, 46);
    deriveMessages(b, a, 40);
    deriveMessages(c, a, 40);
    r.values(b);
    const before = r.computed();
    assert.deepEqual(all(r.values(c)), expected(c));
    assert.equal(r.computed() - before, 2);
  });

  it('a list that leaves another at a position cuts the store there; the other is computed again when read', () => {
    const r = running();
    const a = history.slice(0, 40);
    r.values(a);
    const b = [...history.slice(0, 38), user('b38'), user('b39'), user('b40')];
    deriveMessages(b, a, 38);
    const before = r.computed();
    assert.deepEqual(all(r.values(b)), expected(b));
    assert.equal(r.computed() - before, 3, 'b computed from the cut, not from the start');
    const va = r.values(a);
    assert.equal(va.at(-1), expected(a).at(-1), 'a read after the cut gives its own value');
    assert.deepEqual(all(va), expected(a));
    assert.deepEqual(all(r.values(b)), expected(b), 'and b after a was computed again');
  });
});
