import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MIN_REDACTED_SECRET_CHARS, redactSecrets, redactionTable } from '../../src/turns/secret-redaction.js';

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
