import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Type } from '@sinclair/typebox';
import { coerceText } from '../../src/validation/coerce.js';

const Query = Type.Object({
  limit: Type.Optional(Type.Integer()),
  ratio: Type.Optional(Type.Number()),
  flag: Type.Optional(Type.Boolean()),
  name: Type.Optional(Type.String()),
  tags: Type.Optional(Type.Array(Type.String())),
  counts: Type.Optional(Type.Array(Type.Integer())),
  scope: Type.Optional(Type.Union([Type.Literal('own'), Type.Literal('org')])),
  nothing: Type.Optional(Type.Null()),
});

describe('coerceText (ajv coerceTypes: "array" rules, without a second ajv)', () => {
  it('converts numeric, boolean and empty text to the declared types', () => {
    assert.deepEqual(coerceText(Query, { limit: '20', ratio: '0.5', flag: 'true', nothing: '' }), {
      limit: 20,
      ratio: 0.5,
      flag: true,
      nothing: null,
    });
    assert.deepEqual(coerceText(Query, { flag: 'false' }), { flag: false });
  });

  it('leaves text the type does not admit for the validator to reject', () => {
    assert.deepEqual(coerceText(Query, { limit: '1.5', ratio: 'abc', flag: '1', nothing: 'x' }), {
      limit: '1.5',
      ratio: 'abc',
      flag: '1',
      nothing: 'x',
    });
    assert.deepEqual(coerceText(Query, { limit: '' }), { limit: '' });
  });

  it('keeps strings and string unions as sent', () => {
    assert.deepEqual(coerceText(Query, { name: '42', scope: 'org' }), { name: '42', scope: 'org' });
  });

  it('wraps a lone value into an array, converting items, and unwraps a one-item array for a scalar', () => {
    assert.deepEqual(coerceText(Query, { tags: 'a', counts: ['1', '2'], limit: ['7'] }), { tags: ['a'], counts: [1, 2], limit: 7 });
    assert.deepEqual(coerceText(Query, { limit: ['1', '2'] }), { limit: ['1', '2'] });
  });

  it('ignores keys the schema does not declare', () => {
    assert.deepEqual(coerceText(Query, { cache_buster: '123' }), { cache_buster: '123' });
  });
});
