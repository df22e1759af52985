/**
 * The name an MCP tool is offered under: `server__tool`, within every vendor's tool-name rules
 * (OpenAI, Anthropic and Gemini all accept ^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$; server names start
 * with a letter). A name that needs changing (other characters, over 64) keeps a readable
 * prefix and ends in a hash of the original, so it is stable and distinct from every name that
 * needed no change.
 */
import { createHash } from 'node:crypto';

export const MAX_TOOL_NAME_CHARS = 64;
const HASH_CHARS = 8;

/** e.g. `github__create_issue`; `srv__a.very.long…` → `srv__a_very_long…_1f2e3d4c`. */
export function mcpToolName(server: string, tool: string): string {
  const raw = `${server}__${tool}`;
  const clean = raw.replace(/[^a-zA-Z0-9_-]/g, '_');
  if (clean === raw && raw.length <= MAX_TOOL_NAME_CHARS) return raw;
  const hash = createHash('sha256').update(raw).digest('hex').slice(0, HASH_CHARS);
  return `${clean.slice(0, MAX_TOOL_NAME_CHARS - HASH_CHARS - 1)}_${hash}`;
}
