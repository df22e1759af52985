import { getParts } from 'uWebSockets.js';
import { InvalidRequestError } from '../errors.js';
import { isCleanString } from './input-hygiene.js';

/**
 * Parts one body may have. Uploads need a few; splitting is linear but costs ~2 µs a part on
 * the event loop, and a 10 MB image upload could otherwise carry 170,000 empty parts.
 */
export const MAX_MULTIPART_PARTS = 32;

/** RFC 2046 §5.1.1: a boundary is 1 to 70 characters. */
const MAX_BOUNDARY_LENGTH = 70;

/** One field of a `multipart/form-data` body. */
export interface MultipartPart {
  name: string;
  /** The part's bytes (a copy; safe to keep). */
  data: Buffer;
  /** The part's own Content-Type, when sent. */
  contentType?: string;
  /** Set for file fields. */
  filename?: string;
}

/**
 * Splits a `multipart/form-data` body with uWebSockets.js `getParts` (the only place outside the
 * server adapter that touches uWS). InvalidRequestError when the body or content type is not
 * multipart, the body cannot be parsed, a part has no name (RFC 7578 §4.2 requires one), or a
 * part's name, file name or type is not a clean string (input-hygiene.ts).
 */
export function parseMultipart(body: Buffer, contentType: string | undefined): MultipartPart[] {
  const boundary = contentType === undefined ? undefined : multipartBoundary(contentType);
  if (boundary === undefined) {
    throw new InvalidRequestError('Invalid request: expected multipart/form-data with a boundary of 1 to 70 characters');
  }
  if (delimiterCount(body, boundary, MAX_MULTIPART_PARTS + 2) > MAX_MULTIPART_PARTS + 1) {
    throw new InvalidRequestError(`Invalid request: a multipart body may have at most ${MAX_MULTIPART_PARTS} parts`);
  }
  // uWS reads everything after `boundary=` as the boundary, unquoted: hand it the one we counted.
  const parts = getParts(new Uint8Array(body.buffer, body.byteOffset, body.byteLength), `multipart/form-data; boundary=${boundary}`);
  if (!parts) throw new InvalidRequestError('Invalid request: malformed multipart body');
  return parts.map((p) => {
    if (typeof p.name !== 'string' || p.name === '') {
      throw new InvalidRequestError('Invalid request: every multipart part needs a Content-Disposition: form-data header with a name');
    }
    if (
      !isCleanString(p.name) ||
      (p.filename !== undefined && !isCleanString(p.filename)) ||
      (p.type !== undefined && !isCleanString(p.type))
    ) {
      throw new InvalidRequestError('Invalid request: a multipart name contains a NUL character or an unpaired surrogate');
    }
    const part: MultipartPart = { name: p.name, data: Buffer.from(new Uint8Array(p.data).slice()) };
    if (p.type) part.contentType = p.type;
    if (p.filename !== undefined) part.filename = p.filename;
    return part;
  });
}

/** `;` then a token name, `=`, then a quoted string (with `\` escapes) or a token (RFC 9110 §5.6.6). */
const PARAMETER = /;\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s"]*))/gy;

/**
 * The boundary of a `multipart/form-data` content type, or undefined when the type is another, the
 * parameters do not parse, or the boundary is missing, empty or longer than RFC 2046 allows.
 */
export function multipartBoundary(contentType: string): string | undefined {
  const head = /^\s*multipart\/form-data\s*/i.exec(contentType);
  if (!head) return undefined;
  let boundary: string | undefined;
  let at = head[0].length;
  while (at < contentType.length) {
    PARAMETER.lastIndex = at;
    const m = PARAMETER.exec(contentType);
    if (!m) {
      if (!/^[\s;]*$/.test(contentType.slice(at))) return undefined;
      break;
    }
    at = PARAMETER.lastIndex;
    if (m[1]!.toLowerCase() !== 'boundary') continue;
    if (boundary !== undefined) return undefined;
    boundary = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3]!;
  }
  if (boundary === undefined || boundary.length === 0 || boundary.length > MAX_BOUNDARY_LENGTH) return undefined;
  return boundary;
}

/** Occurrences of `--boundary` in `body` (n parts have n + 1), counting no further than `stopAt`. */
function delimiterCount(body: Buffer, boundary: string, stopAt: number): number {
  const delimiter = Buffer.from(`--${boundary}`);
  let count = 0;
  for (let at = body.indexOf(delimiter); at >= 0 && count < stopAt; at = body.indexOf(delimiter, at + delimiter.length)) count++;
  return count;
}
