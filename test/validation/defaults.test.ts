import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Type } from '@sinclair/typebox';
import { applyDefaults } from '../../src/validation/defaults.js';

const Named = Type.Object({ size: Type.Integer({ default: 10 }) }, { $id: 'Named' });
const resolve = (ref: string) => (ref === 'Named' ? Named : undefined);

describe('applyDefaults (where ajv useDefaults would)', () => {
  it('fills absent properties, nested ones, array items and $ref targets', () => {
    const schema = Type.Object({
      offset: Type.Integer({ default: 0 }),
      opts: Type.Optional(Type.Object({ deep: Type.Boolean({ default: false }) })),
      items: Type.Optional(Type.Array(Type.Object({ n: Type.Integer({ default: 1 }) }))),
      named: Type.Optional(Type.Ref('Named')),
    });
    assert.deepEqual(applyDefaults(schema, { opts: {}, items: [{}, { n: 5 }], named: {} }, resolve), {
      offset: 0,
      opts: { deep: false },
      items: [{ n: 1 }, { n: 5 }],
      named: { size: 10 },
    });
  });

  it('keeps given values, null included, and copies defaults rather than sharing them', () => {
    const schema = Type.Object({ list: Type.Array(Type.String(), { default: [] }), x: Type.Integer({ default: 3 }) });
    const a = applyDefaults(schema, { x: null }, resolve) as { list: string[]; x: unknown };
    assert.equal(a.x, null);
    a.list.push('changed');
    assert.deepEqual(applyDefaults(schema, {}, resolve), { list: [], x: 3 });
  });

  it('does not enter anyOf branches (which applies is known only after validation)', () => {
    const schema = Type.Object({
      u: Type.Union([Type.Object({ a: Type.Integer({ default: 1 }) }), Type.Object({ b: Type.Integer({ default: 2 }) })]),
    });
    assert.deepEqual(applyDefaults(schema, { u: {} }, resolve), { u: {} });
  });
});
