import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildNeedleSet } from '../../src/patterns/index.js';
import {
  MIN_ENCODED_SECRET_CHARS,
  MIN_REDACTED_SECRET_CHARS,
  redactSecrets,
  redactionTable,
} from '../../actors/session/steps/secret-redaction.js';

describe('secret redaction of tool results', () => {
  it('replaces every occurrence of every value with its marker, the longer value first', () => {
    const table = redactionTable([
      { name: 'SHORT', value: 'abcd1234' },
      { name: 'LONG', value: 'xx-abcd1234-yy' },
    ]);
    assert.equal(redactSecrets('a xx-abcd1234-yy b abcd1234 c abcd1234', table), 'a [secret:LONG] b [secret:SHORT] c [secret:SHORT]');
  });

  it('also finds a value escaped inside JSON text', () => {
    const value = 'pa"ss\\word\n1';
    const table = redactionTable([{ name: 'P', value }]);
    assert.equal(redactSecrets(JSON.stringify({ echoed: value }), table), '{"echoed":"[secret:P]"}');
  });

  it(`leaves values shorter than ${MIN_REDACTED_SECRET_CHARS} characters alone (they would match everywhere)`, () => {
    const table = redactionTable([{ name: 'TINY', value: 'ab' }]);
    assert.equal(redactSecrets('abc abd', table), 'abc abd');
  });
});

describe('secret redaction of transformed echoes', () => {
  const value = 'tok_9Hq2mZ7xLp4W';
  const table = redactionTable([{ name: 'T', value }]);
  const bytes = Buffer.from(value);

  it('finds the value inside a longer base64 text at every byte offset, in standard and URL-safe alphabets', () => {
    for (const prefix of ['', 'a', 'ab', 'abc', 'user:']) {
      for (const encoding of ['base64', 'base64url'] as const) {
        const encoded = Buffer.from(`${prefix}${value}!?>`).toString(encoding);
        const out = redactSecrets(`x ${encoded} y`, table);
        assert.match(out, /\[secret:T\]/, `${encoding} after ${JSON.stringify(prefix)}: ${out}`);
        assert.ok(out.length < encoded.length, 'most of the encoding is gone');
      }
    }
  });

  it('finds hex in either case, the reversed value, any letter case, separated characters and URL encoding', () => {
    for (const echoed of [
      bytes.toString('hex'),
      bytes.toString('hex').toUpperCase(),
      [...value].reverse().join(''),
      value.toUpperCase(),
      [...value].join(' '),
      [...value].join('-'),
      encodeURIComponent(`${value}/`),
    ]) {
      assert.equal(redactSecrets(`<${echoed}>`, table).replace(/%2F/i, ''), '<[secret:T]>', echoed);
    }
  });

  it(`values shorter than ${MIN_ENCODED_SECRET_CHARS} characters are redacted only as they are`, () => {
    const short = redactionTable([{ name: 'S', value: 'abc12' }]);
    assert.equal(redactSecrets('abc12 ABC12 a b c 1 2 21cba', short), '[secret:S] ABC12 a b c 1 2 21cba');
  });

  it('matches the union of every occurrence of every needle, as a naive search does', () => {
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const word = (n: number) => Array.from({ length: n }, () => 'abAB'[rnd(4)]).join('');
    for (let round = 0; round < 200; round++) {
      const needles = Array.from({ length: 1 + rnd(5) }, () => word(1 + rnd(4)));
      const text = word(40);
      const naive = new Array<boolean>(text.length).fill(false);
      for (const n of needles) for (let i = text.indexOf(n); i >= 0; i = text.indexOf(n, i + 1)) naive.fill(true, i, i + n.length);
      const found = new Array<boolean>(text.length).fill(false);
      const units = (s: string) => Array.from(s, (c) => c.charCodeAt(0));
      buildNeedleSet(needles.map((n) => ({ needle: units(n), label: n }))).scan(units(text), (start, end) => found.fill(true, start, end));
      assert.deepEqual(found, naive, `${JSON.stringify(needles)} in ${text}`);
    }
  });
});
