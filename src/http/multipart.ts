import { getParts } from 'uWebSockets.js';
import { InvalidRequestError } from '../errors.js';
import { isCleanString } from './input-hygiene.js';

/**
 * Parts one body may have. Uploads need a few; splitting is linear but costs ~2 µs a part on
 * the event loop, and a 10 MB image upload could otherwise carry 170,000 empty parts.
 */
export const MAX_MULTIPART_PARTS = 32;

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
 * multipart, the body cannot be parsed, or a part's name, file name or type is not a clean
 * string (input-hygiene.ts).
 */
export function parseMultipart(body: Buffer, contentType: string | undefined): MultipartPart[] {
  if (!contentType || !/^multipart\/form-data\s*;/i.test(contentType) || !/boundary=/i.test(contentType)) {
    throw new InvalidRequestError('Invalid request: expected multipart/form-data with a boundary');
  }
  if (delimiterCount(body, contentType, MAX_MULTIPART_PARTS + 2) > MAX_MULTIPART_PARTS + 1) {
    throw new InvalidRequestError(`Invalid request: a multipart body may have at most ${MAX_MULTIPART_PARTS} parts`);
  }
  const parts = getParts(new Uint8Array(body.buffer, body.byteOffset, body.byteLength), contentType);
  if (!parts) throw new InvalidRequestError('Invalid request: malformed multipart body');
  return parts.map((p) => {
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

/** Occurrences of `--boundary` in `body` (n parts have n + 1), counting no further than `stopAt`. */
function delimiterCount(body: Buffer, contentType: string, stopAt: number): number {
  const m = /boundary=(?:"([^"]{1,200})"|([^;\s]{1,200}))/i.exec(contentType);
  if (!m) return 0;
  const delimiter = Buffer.from(`--${m[1] ?? m[2]}`);
  let count = 0;
  for (let at = body.indexOf(delimiter); at >= 0 && count < stopAt; at = body.indexOf(delimiter, at + delimiter.length)) count++;
  return count;
}
