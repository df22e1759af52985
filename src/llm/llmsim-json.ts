/**
 * llmsim's structured replies (docs/llmsim.md): with a response format and no `@json`, the
 * simulator answers with the smallest plain value its JSON Schema describes. It covers the
 * keywords replies are usually written with (type, properties, required, items, minItems, enum,
 * const, anyOf/oneOf/allOf, minimum, minLength); a schema it does not understand gets a value
 * that may not validate, which is what the repair path is for. Bounded in depth and width, so
 * a large tenant schema costs the simulator little.
 */
const MAX_DEPTH = 16;
const MAX_ITEMS = 16;

type Schema = Record<string, unknown>;

const isSchema = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A value matching `schema` where the keywords above suffice. */
export function exampleOf(schema: unknown, depth = 0): unknown {
  if (!isSchema(schema) || depth > MAX_DEPTH) return null;
  if ('const' in schema) return schema['const'];
  if (Array.isArray(schema['enum']) && schema['enum'].length) return schema['enum'][0];
  for (const k of ['anyOf', 'oneOf', 'allOf']) {
    const options = schema[k];
    if (Array.isArray(options) && options.length) return exampleOf(options[0], depth + 1);
  }
  const type = Array.isArray(schema['type']) ? schema['type'][0] : schema['type'];
  switch (type ?? (isSchema(schema['properties']) ? 'object' : undefined)) {
    case 'object':
      return objectOf(schema, depth);
    case 'array': {
      const n = Math.min(MAX_ITEMS, Number(schema['minItems']) || 0);
      return Array.from({ length: n }, () => exampleOf(schema['items'], depth + 1));
    }
    case 'string':
      return 'x'.repeat(Math.min(MAX_ITEMS, Number(schema['minLength']) || 0));
    case 'integer':
      return Math.ceil(Number(schema['minimum']) || 0);
    case 'number':
      return Number(schema['minimum']) || 0;
    case 'boolean':
      return false;
    default:
      return null;
  }
}

/** Every required property (and, for a schema without `required`, none). */
function objectOf(schema: Schema, depth: number): Record<string, unknown> {
  const properties = isSchema(schema['properties']) ? schema['properties'] : {};
  const required = Array.isArray(schema['required']) ? schema['required'].slice(0, MAX_ITEMS * 4) : [];
  const out: Record<string, unknown> = {};
  for (const name of required) if (typeof name === 'string') out[name] = exampleOf(properties[name], depth + 1);
  return out;
}
