/**
 * Structured replies' schemas (docs/decisions/0098-structured-replies.md), run by the parse
 * pool: compiling a tenant's JSON Schema is super-linear in it (see client-tool-schemas.ts), and
 * so can validating be (a `pattern`, deep `anyOf`s), so neither runs on the thread that serves
 * HTTP or turns. Each job compiles afresh in its own ajv (`tenantAjv`): nothing a tenant
 * compiled stays behind.
 */
import { tenantAjv } from './client-tool-schemas.js';

/** Errors a repair note and `turn.failed` show at most, and the length of each. */
const MAX_ERRORS = 10;
const MAX_ERROR_CHARS = 300;

/** A reply checked against its schema: the JSON value, or what is wrong with it. */
export type ReplyCheck = { parsed: unknown } | { errors: string[] };

/** Why `schema` is not a usable JSON Schema (ajv's wording, which names the schema's own paths), or null. */
export function replySchemaProblem(schema: Record<string, unknown>): string | null {
  try {
    tenantAjv().compile(schema);
    return null;
  } catch (err) {
    return clip(err instanceof Error ? err.message : String(err));
  }
}

/** Parses the reply (a Markdown code fence around it is tolerated) and validates it against `schema`. */
export function checkReply(schema: Record<string, unknown>, text: string): ReplyCheck {
  let value: unknown;
  try {
    value = JSON.parse(unfenced(text));
  } catch (err) {
    return { errors: [clip(`the reply is not JSON (${err instanceof Error ? err.message : String(err)})`)] };
  }
  const validate = tenantAjv({ allErrors: true }).compile(schema);
  if (validate(value)) return { parsed: value };
  const errors = (validate.errors ?? []).slice(0, MAX_ERRORS).map((e) => clip(`${e.instancePath || '/'} ${e.message ?? 'is invalid'}`));
  return { errors: errors.length ? errors : ['the reply does not match the schema'] };
}

/** The text inside a leading ```json … ``` fence, else the text. */
function unfenced(text: string): string {
  const t = text.trim();
  if (!t.startsWith('```')) return t;
  const body = t.slice(t.indexOf('\n') + 1);
  return body.endsWith('```') ? body.slice(0, -3) : body;
}

function clip(s: string): string {
  return s.length > MAX_ERROR_CHARS ? `${s.slice(0, MAX_ERROR_CHARS)}…` : s;
}
