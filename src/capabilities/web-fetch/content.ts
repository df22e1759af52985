/** Turns a fetched body into text for the LLM: HTML as Markdown or plain text, other text as is. */
import { NodeHtmlMarkdown } from 'node-html-markdown';
import { parse } from 'node-html-parser';

export const FETCH_FORMATS = ['markdown', 'text', 'raw'] as const;
export type FetchFormat = (typeof FETCH_FORMATS)[number];

export interface RenderedBody {
  kind: 'html' | 'text' | 'binary';
  /** Null for binary bodies. */
  content: string | null;
}

const TEXT_TYPES = /^(?:text\/|application\/(?:json|xml|xhtml\+xml|javascript|ecmascript|x-www-form-urlencoded|ld\+json|rss\+xml|atom\+xml|yaml|x-yaml|toml|csv|sql|graphql)\b|[^;]*\+(?:json|xml)\b)/i;
const HTML_TYPES = /^(?:text\/html|application\/xhtml\+xml)\b/i;

/** Renders `body` by its Content-Type (sniffed when absent) in the requested format. */
export function renderBody(body: Buffer, contentType: string | undefined, format: FetchFormat): RenderedBody {
  const type = (contentType ?? '').trim();
  const text = type === '' ? sniffText(body) : TEXT_TYPES.test(type) ? decode(body, charsetOf(type)) : null;
  if (text === null) return { kind: 'binary', content: null };
  const html = HTML_TYPES.test(type) || (type === '' && /^\s*(?:<!doctype html|<html)/i.test(text));
  if (!html) return { kind: 'text', content: text };
  if (format === 'raw') return { kind: 'html', content: text };
  return { kind: 'html', content: format === 'text' ? htmlToText(text) : htmlToMarkdown(text) };
}

export function htmlToMarkdown(html: string): string {
  return NodeHtmlMarkdown.translate(html).trim();
}

export function htmlToText(html: string): string {
  const root = parse(html.replace(/<!doctype[^>]*>/gi, ''));
  for (const node of root.querySelectorAll('script, style, noscript, template, head')) node.remove();
  return root.structuredText.replace(/\n{3,}/g, '\n\n').trim();
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
