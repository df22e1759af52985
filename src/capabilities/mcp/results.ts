/**
 * An MCP tool result as our content parts: text as text; images and audio as a note (tool
 * results reach the LLM as text, and a base64 image would cost its size in tokens); resource
 * links and embedded resources as text; `structuredContent` as JSON text unless a text part
 * already carries it. `isError: true` is a ToolError, so the call is a `tool.completed` with
 * `success: false` and the server's text as its error.
 */
import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import { ToolError, type TextPart, type ToolResult } from '../types.js';

/** Longest error text taken from an `isError` result (the act step cuts at 1,000 as well). */
const MAX_ERROR_CHARS = 1_000;

/** Maps a result; `redact` removes the header secrets' values. Throws a ToolError for `isError`. */
export function toToolResult(result: CallToolResult, server: string, redact: (text: string) => string): ToolResult {
  const parts: TextPart[] = (result.content ?? []).map((block) => ({ type: 'text', text: redact(textOf(block)) }));
  if (result.structuredContent !== undefined) {
    const json = JSON.stringify(result.structuredContent);
    if (!parts.some((p) => p.text === json || safeEqualJson(p.text, result.structuredContent)))
      parts.push({ type: 'text', text: redact(json) });
  }
  if (result.isError) {
    const text = parts
      .map((p) => p.text)
      .join('\n')
      .trim();
    throw new ToolError(`MCP server "${server}" reported an error: ${text.slice(0, MAX_ERROR_CHARS) || '(no details)'}`);
  }
  return { content: parts.length > 0 ? parts : [{ type: 'text', text: '(no content)' }] };
}

function textOf(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
    case 'audio':
      return `[${block.type} ${block.mimeType}, ${Buffer.byteLength(block.data, 'base64')} bytes: not shown]`;
    case 'resource_link':
      return `[resource ${block.name}: ${block.uri}${block.mimeType ? ` (${block.mimeType})` : ''}]${block.description ? ` ${block.description}` : ''}`;
    case 'resource': {
      const r = block.resource;
      return 'text' in r && typeof r.text === 'string'
        ? `[resource ${r.uri}]\n${r.text}`
        : `[resource ${r.uri}${r.mimeType ? ` (${r.mimeType})` : ''}: binary, not shown]`;
    }
    default:
      return `[${String((block as { type?: unknown }).type)} content: not shown]`;
  }
}

/** True when `text` is JSON equal to `value` (servers often send the structured result pretty-printed as text too). */
function safeEqualJson(text: string, value: unknown): boolean {
  const t = text.trimStart();
  if (!t.startsWith('{') && !t.startsWith('[')) return false;
  try {
    return JSON.stringify(JSON.parse(t)) === JSON.stringify(value);
  } catch {
    return false;
  }
}
