// Turns a failed call into a sentence a person can act on: never a status word ("Unauthorized"),
// a browser's network message ("Failed to fetch"), a schema pattern or raw JSON.
import { ApiError } from './api.js';

/** `Invalid request: body.title must match pattern "^…$"` → the field name and the rule's kind. */
function describeInvalid(message) {
  const m = /^Invalid request: (?:(?:body|query|params)\.)?([\w.[\]-]+) (.*)$/.exec(message);
  if (!m) return 'The request was not accepted; check the fields and try again.';
  const field = m[1].replace(/_/g, ' ');
  const rule = m[2];
  if (rule === 'is required') return `“${field}” is required.`;
  if (rule === 'is not allowed') return `“${field}” is not accepted here.`;
  if (rule.startsWith('must match pattern') || rule.startsWith('must match format')) return `“${field}” has characters or a format that are not allowed.`;
  if (/must NOT have more than|must NOT be longer/.test(rule)) return `“${field}” is too long.`;
  if (/must NOT have fewer than|must NOT be shorter/.test(rule)) return `“${field}” is too short or empty.`;
  if (/must be (<|>)/.test(rule)) return `“${field}” is out of range.`;
  return `“${field}” is not valid.`;
}

/** A message is shown as it is only when it reads like a sentence (the service's own words). */
function readable(message) {
  return typeof message === 'string' && message.length > 0 && !/[{}[\]^$\\]/.test(message) && !/^HTTP \d+$/.test(message);
}

/** A sentence for an error; `notFound` names the thing a 404 is about ("This session"). */
export function humanError(err, { notFound = 'It' } = {}) {
  if (!(err instanceof ApiError)) {
    if (err instanceof TypeError) return 'Cannot reach the service. Check your connection; the console keeps trying.';
    return readable(err?.message) ? err.message : 'Something went wrong; try again.';
  }
  switch (err.status) {
    case 400:
      return err.message.startsWith('Invalid request') ? describeInvalid(err.message) : readable(err.message) ? err.message : 'The request was not accepted.';
    case 401:
      return 'Your sign-in is no longer accepted. Sign out and sign in again.';
    case 403:
      return 'Your role does not allow this. Ask an admin of your organisation.';
    case 404:
      return `${notFound} was not found: it may have been deleted, or it belongs to another organisation.`;
    case 409:
      return readable(err.message) ? err.message : 'This conflicts with the current state; reload and try again.';
    case 413:
      return 'That is too large for the service.';
    case 429:
      return 'Too many requests right now; wait a moment and try again.';
    default:
      if (err.status >= 500) return `The service had a problem (error ${err.status}); try again shortly.`;
      return readable(err.message) ? err.message : `The request failed (error ${err.status}).`;
  }
}

export const isNotFound = (err) => err instanceof ApiError && err.status === 404;
