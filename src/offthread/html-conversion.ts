/**
 * HTML to Markdown or plain text. Its parsers (node-html-markdown, node-html-parser and their
 * CSS and entity modules) are loaded only where HTML is converted, the parse pool's workers, so a
 * start of the service does not load them (issue 13 item 7).
 */
import { NodeHtmlMarkdown } from 'node-html-markdown';
import { parse } from 'node-html-parser';

/** HTML as Markdown or plain text, on the calling thread (the parse pool's workers call this). */
export function convertHtml(html: string, format: 'markdown' | 'text'): string {
  return format === 'text' ? htmlToText(html) : htmlToMarkdown(html);
}

function htmlToMarkdown(html: string): string {
  return NodeHtmlMarkdown.translate(html).trim();
}

function htmlToText(html: string): string {
  // `[^<>]` not `[^>]`: each attempt stops at the next tag, so many unclosed doctypes stay linear.
  const root = parse(html.replace(/<!doctype[^<>]*>/gi, ''));
  for (const node of root.querySelectorAll('script, style, noscript, template, head')) node.remove();
  return root.structuredText.replace(/\n{3,}/g, '\n\n').trim();
}
