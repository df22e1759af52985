import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidRequestError } from '../../src/errors.js';
import { compileLinearRegex } from '../../src/patterns/index.js';
import { compileGlob } from '../../src/patterns/index.js';

const refused = (pattern: RegExp) => (e: unknown) => e instanceof InvalidRequestError && e.status === 400 && pattern.test(e.message);

describe('compileLinearRegex', () => {
  it('matches like RegExp.test for ordinary patterns, with ignoreCase and JS \\u escapes', () => {
    assert.equal(compileLinearRegex('step \\d').test('step 2'), true);
    assert.equal(compileLinearRegex('^TODO|FIXME$').test('x FIXME'), true);
    assert.equal(compileLinearRegex('todo').test('TODO'), false);
    assert.equal(compileLinearRegex('todo', { ignoreCase: true }).test('TODO'), true);
    assert.equal(compileLinearRegex('caf\\u00e9').test('café'), true);
    assert.equal(compileLinearRegex('\\\\u00e9').test('\\u00e9'), true);
  });

  it('^(a+)+$ and (a|aa)*c over 100,000 characters take milliseconds', () => {
    const start = performance.now();
    assert.equal(compileLinearRegex('^(a+)+$').test('a'.repeat(100_000)), true);
    assert.equal(compileLinearRegex('^(a+)+$').test(`${'a'.repeat(100_000)}b`), false);
    assert.equal(compileLinearRegex('(a|aa)*c').test('a'.repeat(100_000)), false);
    assert.ok(performance.now() - start < 500);
  });

  it('refuses backreferences, lookaround and malformed patterns with a 400 that says why', () => {
    assert.throws(() => compileLinearRegex('(a)\\1'), refused(/^Invalid regular expression: backreferences/));
    assert.throws(() => compileLinearRegex('(?<n>a)\\k<n>'), refused(/backreferences/));
    for (const p of ['a(?=b)', 'a(?!b)', '(?<=a)b', '(?<!a)b'])
      assert.throws(() => compileLinearRegex(p), refused(/lookahead and lookbehind/));
    assert.throws(() => compileLinearRegex('('), refused(/^Invalid regular expression: missing closing \)/));
  });
});

describe('compileGlob', () => {
  it('keeps glob semantics and is linear on backtracking-hostile globs', () => {
    assert.equal(compileGlob('*.md')('/a/b/c.md'), true);
    assert.equal(compileGlob('a/**/*.ts')('/a/x/y/z.ts'), true);
    assert.equal(compileGlob('a/*.ts')('/a/x/z.ts'), false);
    assert.equal(compileGlob('{x,y}.?s')('/q/y.ts'), true);
    assert.equal(compileGlob('[a](b).txt')('/[a](b).txt'), true);
    const start = performance.now();
    assert.equal(compileGlob(`${'*a'.repeat(40)}b`)(`/${'a'.repeat(5000)}`), false);
    assert.ok(performance.now() - start < 500);
  });
});
