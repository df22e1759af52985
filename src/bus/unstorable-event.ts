/**
 * An append the event log refused for what its events hold, not for the state of the log or
 * the network: a text the store cannot encode (PostgreSQL's jsonb refuses `\u0000` and lone
 * surrogates), a document past the store's size limits. Every retry is refused the same way, so
 * it is a 4xx (not an unknown outcome): the turn ends with `turn.failed` instead of being
 * redelivered forever (issue 30). Nothing of the batch was stored (one statement).
 */
import { UnprocessableError } from '../errors.js';

export class UnstorableEventError extends UnprocessableError {
  constructor(options?: ErrorOptions) {
    super('An event could not be stored: the event log refused its content', options);
    this.name = 'UnstorableEventError';
  }
}

/**
 * PostgreSQL's SQLSTATEs for content it cannot store: untranslatable_character (jsonb's
 * `\u0000`), character_not_in_repertoire (a NUL byte in text), invalid_text_representation
 * (jsonb's lone surrogate escape), program_limit_exceeded (a jsonb value past its size limits).
 */
const PG_CONTENT_REFUSALS: ReadonlySet<string> = new Set(['22P05', '22021', '22P02', '54000']);

/** True for a PostgreSQL error that refuses the statement's content. */
export function isPgContentRefusal(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && PG_CONTENT_REFUSALS.has(code);
}
