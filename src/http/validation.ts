import type { ErrorObject } from 'ajv';
import type { TSchema } from '@sinclair/typebox';
import { InvalidRequestError } from '../errors.js';
import { addNamedSchemas, ajv, resolveRef } from '../validation/index.js';
import { coerceText } from '../validation/index.js';
import { applyDefaults } from '../validation/index.js';
import { assertFiniteNumbers } from './input-hygiene.js';

/**
 * Compiles route schemas once, at registration, on the service's one ajv (src/validation/ajv.ts).
 * Bodies are validated as sent; path and query values (text on the wire) are first converted
 * to the schema's types (style rule 6). Request parts get their schema's defaults; replies never.
 */
export function createValidation(namedSchemas: TSchema[]) {
  addNamedSchemas(namedSchemas);

  /**
   * A checker of one part of a request that returns it typed as `T`: the route's schema's
   * static type (src/http/route.ts). Path and query numbers must also be finite. Without a
   * schema, the part is passed on as read.
   */
  function compileInput<T>(schema: TSchema | undefined, where: 'body' | 'query' | 'params'): (value: unknown) => T {
    if (schema === undefined) return (value) => value as T;
    const fn = ajv.compile<T>(schema);
    const textValues = where !== 'body';
    return (value) => {
      if (textValues) coerceText(schema, value);
      applyDefaults(schema, value, resolveRef);
      if (!fn(value)) throw new InvalidRequestError(describe(where, fn.errors?.[0]));
      if (textValues) assertFiniteNumbers(value, where);
      return value;
    };
  }

  /** A reply checker: no coercion, no defaults (a reply is checked, never changed). */
  function compileReply(schema: TSchema): (value: unknown) => string | null {
    const fn = ajv.compile(schema);
    return (value) => (fn(value) ? null : (fn.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`).join('; '));
  }

  return { compileInput, compileReply };
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
