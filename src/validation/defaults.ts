/**
 * Fills absent properties from their schema's `default`, where ajv's `useDefaults` would:
 * in `properties` (and items, `$ref` and `allOf` on the way), never inside `anyOf`, `oneOf`
 * or `not` (which branch applies is not known before validation). Mutates and returns `value`.
 */
type Schema = Record<string, unknown>;

export function applyDefaults(schema: unknown, value: unknown, resolve: (ref: string) => unknown): unknown {
  visit(schema, value, resolve, 0);
  return value;
}

// Named schemas may refer to themselves; the walk follows the data, which is finite, but a bound keeps it cheap.
const MAX_DEPTH = 64;

function visit(schema: unknown, value: unknown, resolve: (ref: string) => unknown, depth: number): void {
  if (!isObject(schema) || depth > MAX_DEPTH) return;
  if (typeof schema['$ref'] === 'string') visit(resolve(schema['$ref']), value, resolve, depth + 1);
  if (Array.isArray(schema['allOf'])) for (const s of schema['allOf']) visit(s, value, resolve, depth + 1);
  if (isObject(value) && isObject(schema['properties'])) {
    for (const [key, sub] of Object.entries(schema['properties'])) {
      if (!isObject(sub)) continue;
      if (value[key] === undefined && 'default' in sub) value[key] = structuredClone(sub['default']);
      if (value[key] !== undefined) visit(sub, value[key], resolve, depth + 1);
    }
  }
  if (Array.isArray(value) && isObject(schema['items'])) for (const item of value) visit(schema['items'], item, resolve, depth + 1);
}

function isObject(x: unknown): x is Schema {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}
