import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidRequestError } from '../../src/errors.js';
import { compileLinearRegex, MAX_PROGRAM_SIZE } from '../../src/patterns/index.js';
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

describe('the program-size bound', () => {
  it('refuses a pattern compiling past MAX_PROGRAM_SIZE instructions with a 400 "Pattern too complex" naming the size', () => {
    assert.equal(MAX_PROGRAM_SIZE, 2000);
    // Issue 30 item 1: 60 alternatives repeated {1000}, 161 characters, 9,002 instructions.
    const alternatives = [...'abcdefghijklmnopqrstuvwxyz', ...[...'bcdefghijklmnopqrstuvwxyzABCDEFGH'].map((c) => `a${c}`), 'ba'];
    const issue = `(${alternatives.join('|')}){1000}`;
    assert.equal(issue.length, 161);
    assert.throws(
      () => compileLinearRegex(issue),
      refused(/^Pattern too complex: it compiles to 9002 instructions, more than 2000 instructions; use fewer/),
    );
    assert.throws(() => compileLinearRegex('(?:a|ab){1000}'), refused(/^Pattern too complex: it compiles to 4002 instructions/));
    // Past RE2's own limit (refused by its parser, never compiled): the same refusal.
    const cjk = (i: number) => String.fromCharCode(0x4e00 + i);
    const huge = `(?:${Array.from({ length: 700 }, (_, i) => cjk(i) + cjk(3 * i + 1)).join('|')}){1000}`;
    assert.throws(() => compileLinearRegex(huge), refused(/^Pattern too complex: it compiles to more than 2000 instructions/));
  });

  it('accepts what ordinary searches need up to the bound: a 1000-character literal or alternation, counted repeats of classes', () => {
    for (const p of [
      'x'.repeat(1000),
      Array.from({ length: 250 }, (_, i) => `w${i}`).join('|'),
      '[a-z]{1000}',
      '(?:\\w+\\s*){100}',
      'TODO|FIXME',
    ]) {
      const re = compileLinearRegex(p, { ignoreCase: true });
      assert.ok(re.programSize <= MAX_PROGRAM_SIZE, `${p.slice(0, 20)}: ${re.programSize}`);
    }
    assert.equal(compileLinearRegex('(?:a|b){1000}').programSize, 1002);
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
