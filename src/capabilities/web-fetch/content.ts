/** Turns a fetched body into text for the LLM: HTML as Markdown or plain text, other text as is. */

export const FETCH_FORMATS = ['markdown', 'text', 'raw'] as const;
export type FetchFormat = (typeof FETCH_FORMATS)[number];

export interface RenderedBody {
  kind: 'html' | 'text' | 'binary';
  /** Null for binary bodies. */
  content: string | null;
}

const TEXT_TYPES =
  /^(?:text\/|application\/(?:json|xml|xhtml\+xml|javascript|ecmascript|x-www-form-urlencoded|ld\+json|rss\+xml|atom\+xml|yaml|x-yaml|toml|csv|sql|graphql)\b|[^;]*\+(?:json|xml)\b)/i;
const HTML_TYPES = /^(?:text\/html|application\/xhtml\+xml)\b/i;

/** Converts HTML to Markdown or text; the app runs it in the parse pool with a deadline. */
/** `caller`: the session and its organisation, whose fair share of the parse pool the conversion uses. */
export type HtmlConverter = (html: string, format: 'markdown' | 'text', caller?: { org: string; key: string }) => Promise<string>;

/**
 * `convertHtml` (html-conversion.ts) as an `HtmlConverter`, for callers without the parse pool
 * (tests, tools built alone); its parsers load at the first call.
 */
export const convertHtmlHere: HtmlConverter = async (html, format) => (await import('./html-conversion.js')).convertHtml(html, format);

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
): Promise<RenderedBody> {
  const read = readBody(body, contentType);
  if (read.kind !== 'html' || format === 'raw') return read;
  return { kind: 'html', content: await convert(read.content, format) };
}

function readBody(
  body: Buffer,
  contentType: string | undefined,
): { kind: 'binary'; content: null } | { kind: 'html' | 'text'; content: string } {
  const type = (contentType ?? '').trim();
  const text = type === '' ? sniffText(body) : TEXT_TYPES.test(type) ? decode(body, charsetOf(type)) : null;
  if (text === null) return { kind: 'binary', content: null };
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

/** UTF-8 text when the bytes look like text (no NUL in the first 8 KiB), else null. */
function sniffText(body: Buffer): string | null {
  if (body.subarray(0, 8192).includes(0)) return null;
  return new TextDecoder('utf-8').decode(body);
}
