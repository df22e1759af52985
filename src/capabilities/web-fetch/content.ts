/** Turns a fetched body into text for the LLM: HTML as Markdown or plain text, other text as is. */

export const FETCH_FORMATS = ['markdown', 'text', 'raw'] as const;
export type FetchFormat = (typeof FETCH_FORMATS)[number];

export interface RenderedBody {
  kind: 'html' | 'text' | 'binary';
  /** Null for binary bodies. */
  content: string | null;
  /** HTML past the conversion cap was left out. */
  cut?: boolean;
}

/**
 * Characters of HTML converted (WEB_FETCH_MAX_CONVERT_CHARS): node-html-markdown slows down
 * sharply past about 150,000 (on a loaded 2-core machine 128 KiB of paragraphs took 0.9 s, 192 KiB
 * 16 s, 256 KiB 52 s), so a bigger page only ever reached the parse deadline.
 */
export const DEFAULT_MAX_CONVERT_CHARS = 128 * 1024;

const TEXT_TYPES =
  /^(?:text\/|application\/(?:json|xml|xhtml\+xml|javascript|ecmascript|x-www-form-urlencoded|ld\+json|rss\+xml|atom\+xml|yaml|x-yaml|toml|csv|sql|graphql)\b|[^;]*\+(?:json|xml)\b)/i;
const HTML_TYPES = /^(?:text\/html|application\/xhtml\+xml)\b/i;

/** Converts HTML to Markdown or text; the app runs it in the parse pool with a deadline. */
/** `caller`: the session and its organisation, whose fair share of the parse pool the conversion uses. */
export type HtmlConverter = (html: string, format: 'markdown' | 'text', caller?: { org: string; key: string }) => Promise<string>;

/**
 * `convertHtml` (src/offthread/html-conversion.ts) as an `HtmlConverter`, for callers without the parse pool
 * (tests, tools built alone); its parsers load at the first call.
 */
export const convertHtmlHere: HtmlConverter = async (html, format) =>
  (await import('../../offthread/html-conversion.js')).convertHtml(html, format);

/**
 * Renders `body` by its Content-Type (sniffed when absent) in the requested format, HTML converted
 * by `convert`: node-html-parser is super-linear on unclosed nested tags (10 KB of `<b>` took
 * seconds), so the service passes the parse pool's converter and never converts on the event loop.
 */
export async function renderBody(
  body: Buffer,
  contentType: string | undefined,
  format: FetchFormat,
  convert: HtmlConverter = convertHtmlHere,
  maxConvertChars = DEFAULT_MAX_CONVERT_CHARS,
): Promise<RenderedBody> {
  const read = readBody(body, contentType);
  if (read.kind !== 'html' || format === 'raw') return read;
  if (read.content.length <= maxConvertChars) return { kind: 'html', content: await convert(read.content, format) };
  return { kind: 'html', content: await convert(cutHtml(read.content, maxConvertChars), format), cut: true };
}

/** The first `max` characters of `html`, ending before the last tag that starts within them (no half tag). */
function cutHtml(html: string, max: number): string {
  const lastTag = html.lastIndexOf('<', max);
  return html.slice(0, lastTag > 0 ? lastTag : max);
}

function readBody(
  body: Buffer,
  contentType: string | undefined,
): { kind: 'binary'; content: null } | { kind: 'html' | 'text'; content: string } {
  const type = (contentType ?? '').trim();
  const decoded = type === '' ? sniffText(body) : TEXT_TYPES.test(type) ? decode(body, charsetOf(type)) : null;
  if (decoded === null || looksBinary(decoded)) return { kind: 'binary', content: null };
  // A stray NUL means nothing in text (HTML parsers drop it) and no store takes it.
  const text = decoded.includes('\0') ? decoded.replaceAll('\0', '') : decoded;
  const html = HTML_TYPES.test(type) || (type === '' && /^\s*(?:<!doctype html|<html)/i.test(text));
  return { kind: html ? 'html' : 'text', content: text };
}

function charsetOf(contentType: string): string {
  return /charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1] ?? 'utf-8';
}

function decode(body: Buffer, charset: string): string {
  try {
    return new TextDecoder(charset).decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

/** How much of a body is looked at for a NUL, the mark of binary content (as `file` and git judge it). */
const SNIFF_BYTES = 8192;
/** Decoded text with more NULs than this share of its characters is binary wherever they are. */
const MAX_NUL_SHARE = 1 / 64;

/** UTF-8 text when the bytes look like text (no NUL in the first 8 KiB), else null. */
function sniffText(body: Buffer): string | null {
  if (body.subarray(0, SNIFF_BYTES).includes(0)) return null;
  return new TextDecoder('utf-8').decode(body);
}

/**
 * Text that is not: a NUL in its first 8 KiB, or NULs all through it, whatever its declared type
 * (checked after decoding, so UTF-16's zero bytes are not NULs). Such a body, 1 MiB of NUL served
 * as text/html, went through the HTML converter and into the session's events as a megabyte of
 * text (issue 30: 14 s and +962 MB RSS per page); as binary it costs nothing.
 */
function looksBinary(text: string): boolean {
  let at = text.indexOf('\0');
  if (at === -1) return false;
  if (at < SNIFF_BYTES) return true;
  const most = text.length * MAX_NUL_SHARE;
  for (let n = 1; at !== -1; n++, at = text.indexOf('\0', at + 1)) if (n > most) return true;
  return false;
}
