type Json = Record<string, unknown>;

/** Values for strings of a format, and for common property names. */
const FORMAT_SAMPLES: Record<string, string> = {
  uuid: '0195f3c0-8a2b-7c3d-9e4f-5a6b7c8d9e0f',
  'date-time': '2026-01-15T09:30:00.000Z',
  date: '2026-01-15',
  email: 'admin@example.com',
  uri: 'https://example.com/',
  url: 'https://example.com/',
  byte: 'aGVsbG8=',
  binary: '',
};
const NAME_SAMPLES: Record<string, string> = {
  name: 'Support agent',
  system_prompt: 'You are a helpful assistant.',
  description: 'Answers questions about the product.',
  title: 'First session',
  text: 'Hello!',
  email: 'admin@example.com',
  password: 'correct horse battery staple',
  error: 'Invalid request',
};
const STRING_CANDIDATES = ['example', 'example_1', 'en', 'a', 'x', '1'];
const MAX_DEPTH = 8;

/**
 * A deterministic example value for a JSON Schema of the OpenAPI document (`$ref`s into
 * `components`): the schema's own example/const/default/enum when it has one, else required
 * properties (and, in responses, optional ones near the top), formats and name hints. Returns
 * undefined when no value is found (a string pattern none of the candidates matches).
 */
export function sampleSchema(
  schema: unknown,
  components: Record<string, unknown>,
  mode: 'request' | 'response',
  depth = 0,
  key = '',
): unknown {
  if (!schema || typeof schema !== 'object' || depth > MAX_DEPTH) return undefined;
  const s = schema as Json;
  if (typeof s['$ref'] === 'string') return sampleSchema(components[s['$ref'].split('/').pop()!], components, mode, depth + 1, key);
  if ('const' in s) return s['const'];
  if (Array.isArray(s['examples']) && s['examples'].length) return s['examples'][0];
  if ('example' in s) return s['example'];
  if ('default' in s) return s['default'];
  if (Array.isArray(s['enum']) && s['enum'].length) return s['enum'][0];
  const variants = (s['anyOf'] ?? s['oneOf']) as unknown[] | undefined;
  if (Array.isArray(variants)) {
    const ordered = [...variants.filter((v) => (v as Json)['type'] !== 'null'), ...variants.filter((v) => (v as Json)['type'] === 'null')];
    for (const v of ordered) {
      const value = sampleSchema(v, components, mode, depth + 1, key);
      if (value !== undefined) return value;
    }
    return undefined;
  }
  const type = Array.isArray(s['type']) ? (s['type'] as string[]).find((t) => t !== 'null') : (s['type'] as string | undefined);
  switch (type) {
    case 'object':
      return sampleObject(s, components, mode, depth);
    case 'array': {
      const item = sampleSchema(s['items'], components, mode, depth + 1, key);
      const min = Number(s['minItems'] ?? 0);
      if (item === undefined) return min ? undefined : [];
      return Array.from({ length: Math.max(1, min) }, () => item);
    }
    case 'string':
      return sampleString(s, key);
    case 'integer':
    case 'number': {
      const min =
        typeof s['minimum'] === 'number' ? s['minimum'] : typeof s['exclusiveMinimum'] === 'number' ? s['exclusiveMinimum'] + 1 : 1;
      return typeof s['maximum'] === 'number' ? Math.min(min, s['maximum']) : min;
    }
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return {};
  }
}

function sampleObject(s: Json, components: Record<string, unknown>, mode: 'request' | 'response', depth: number): Json | undefined {
  const required = new Set((s['required'] as string[] | undefined) ?? []);
  const out: Json = {};
  for (const [name, prop] of Object.entries((s['properties'] as Json | undefined) ?? {})) {
    const wanted = required.has(name) || (mode === 'response' && depth < 3);
    if (!wanted) continue;
    const value = sampleSchema(prop, components, mode, depth + 1, name);
    if (value === undefined && required.has(name)) return undefined;
    if (value !== undefined) out[name] = value;
  }
  // A map that must not be empty (`minProperties`): one entry under a key its pattern accepts.
  if (Object.keys(out).length < Number(s['minProperties'] ?? 0)) {
    for (const [pattern, valueSchema] of Object.entries((s['patternProperties'] as Json | undefined) ?? {})) {
      const name = MAP_KEY_CANDIDATES.find((k) => new RegExp(pattern, 'u').test(k));
      const value = name === undefined ? undefined : sampleSchema(valueSchema, components, mode, depth + 1, name);
      if (name !== undefined && value !== undefined) out[name] = value;
      break;
    }
  }
  return out;
}

const MAP_KEY_CANDIDATES = ['API_KEY', 'example', 'key', 'a'];

function sampleString(s: Json, key: string): string | undefined {
  const format = s['format'] as string | undefined;
  const pattern = typeof s['pattern'] === 'string' ? new RegExp(s['pattern'], 'u') : undefined;
  const min = Number(s['minLength'] ?? 0);
  const max = Number(s['maxLength'] ?? Infinity);
  const fit = (v: string) => (v.length < min ? v.padEnd(min, 'x') : v).slice(0, max);
  const candidates = [format ? FORMAT_SAMPLES[format] : undefined, NAME_SAMPLES[key], ...STRING_CANDIDATES]
    .filter((v): v is string => v !== undefined)
    .map(fit);
  return candidates.find((v) => !pattern || pattern.test(v));
}
