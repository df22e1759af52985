/**
 * Converts text values (path, query, environment) to the types their schema declares, with
 * ajv's `coerceTypes: 'array'` rules: numeric text to numbers (integers only when whole),
 * `true`/`false` to booleans, empty text to null, a lone value to a one-item array and a
 * one-item array to its value. Anything else is left as is for the validator to reject.
 */
type Schema = Record<string, unknown>;

export function coerceText(schema: unknown, value: unknown): unknown {
  if (!isObject(schema) || !isObject(value) || !isObject(schema['properties'])) return value;
  const props = schema['properties'];
  for (const key of Object.keys(value)) {
    const sub = props[key];
    if (isObject(sub)) value[key] = coerceValue(sub, value[key]);
  }
  return value;
}

function coerceValue(schema: Schema, value: unknown): unknown {
  const types = typesOf(schema);
  if (types.size === 0) return value;
  if (types.has('array')) {
    const items = Array.isArray(value) ? value : [value];
    const itemSchema = schema['items'];
    return isObject(itemSchema) ? items.map((v) => coerceValue(itemSchema, v)) : items;
  }
  const scalar = Array.isArray(value) && value.length === 1 ? value[0] : value;
  if (typeof scalar !== 'string') return typeof scalar === 'number' && types.has('string') && types.size === 1 ? String(scalar) : scalar;
  if (types.has('string')) return scalar;
  for (const t of types) {
    const converted = fromText(t, scalar);
    if (converted !== NOT_CONVERTED) return converted;
  }
  return scalar;
}

const NOT_CONVERTED = Symbol('not converted');

function fromText(type: string, text: string): unknown {
  const n = text === '' ? Number.NaN : Number(text);
  if (type === 'number' && !Number.isNaN(n)) return n;
  if (type === 'integer' && !Number.isNaN(n) && n % 1 === 0) return n;
  if (type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  if (type === 'null' && text === '') return null;
  return NOT_CONVERTED;
}

/**
 * Per schema (route schemas are built once): every query parameter of every request asked
 * for its types, a Set each time (~1 % of the service's allocations under turn load).
 */
const typesBySchema = new WeakMap<Schema, ReadonlySet<string>>();

function typesOf(schema: Schema): ReadonlySet<string> {
  let types = typesBySchema.get(schema);
  if (!types) typesBySchema.set(schema, (types = computeTypes(schema)));
  return types;
}

/** The JSON types a schema admits: `type`, or the types of its `anyOf` branches' types and constants. */
function computeTypes(schema: Schema): Set<string> {
  const t = schema['type'];
  if (typeof t === 'string') return new Set([t]);
  if (Array.isArray(t)) return new Set(t.filter((x): x is string => typeof x === 'string'));
  if ('const' in schema) return new Set([typeof schema['const'] === 'number' ? 'number' : typeof schema['const']]);
  const branches = schema['anyOf'];
  if (!Array.isArray(branches)) return new Set();
  return new Set(branches.flatMap((b) => (isObject(b) ? [...typesOf(b)] : [])));
}

function isObject(x: unknown): x is Schema {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}
