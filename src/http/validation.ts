import { Ajv, type ErrorObject } from 'ajv';
import ajvFormats from 'ajv-formats';
import type { TSchema } from '@sinclair/typebox';
import { InvalidRequestError } from '../errors.js';
import { assertFiniteNumbers } from './input-hygiene.js';

// ajv-formats is CommonJS; under NodeNext its plugin is the `.default` of the module object.
const addFormats = ajvFormats.default;

/**
 * Compiles route schemas once, at registration. Bodies are validated as sent; path and
 * query values (text on the wire) are coerced to the schema's types (style rule 6).
 */
export function createValidation(namedSchemas: TSchema[]) {
  const strictAjv = build({ coerceTypes: false, useDefaults: true });
  const coercingAjv = build({ coerceTypes: 'array', useDefaults: true });

  function build(opts: { coerceTypes: boolean | 'array'; useDefaults: boolean }): Ajv {
    const ajv = new Ajv({ ...opts, strict: true, discriminator: true, allErrors: false, removeAdditional: false });
    addFormats(ajv);
    for (const s of namedSchemas) ajv.addSchema(s);
    return ajv;
  }

  /**
   * A checker of one part of a request that returns it typed as `T`: the route's schema's
   * static type (src/http/route.ts). Path and query numbers must also be finite. Without a
   * schema, the part is passed on as read.
   */
  function compileInput<T>(schema: TSchema | undefined, where: 'body' | 'query' | 'params'): (value: unknown) => T {
    const fn = (where === 'body' ? strictAjv : coercingAjv).compile<T>(schema ?? true);
    const textValues = where !== 'body' && schema !== undefined;
    return (value) => {
      if (!fn(value)) throw new InvalidRequestError(describe(where, fn.errors?.[0]));
      if (textValues) assertFiniteNumbers(value, where);
      return value;
    };
  }

  let replyAjv: Ajv | undefined;
  /** A reply checker: no coercion, no defaults (a reply is checked, never changed). */
  function compileReply(schema: TSchema): (value: unknown) => string | null {
    replyAjv ??= build({ coerceTypes: false, useDefaults: false });
    const fn = replyAjv.compile(schema);
    return (value) => (fn(value) ? null : (fn.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`).join('; '));
  }

  return { compileInput, compileReply, ajv: strictAjv };
}

/** A short, safe message naming the offending field, e.g. `Invalid request: body.name is required`. */
function describe(where: string, e: ErrorObject | undefined): string {
  if (!e) return 'Invalid request';
  const path = [where, ...e.instancePath.split('/').filter(Boolean)].join('.');
  if (e.keyword === 'required') return `Invalid request: ${path}.${String(e.params['missingProperty'])} is required`;
  if (e.keyword === 'additionalProperties') return `Invalid request: ${path}.${String(e.params['additionalProperty'])} is not allowed`;
  return `Invalid request: ${path} ${e.message ?? 'is invalid'}`;
}

export type Validation = ReturnType<typeof createValidation>;
