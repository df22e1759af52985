/**
 * Every way an MCP call or listing can fail, as one ToolError whose text the LLM can act on.
 * Only our own words and, for a call, the server's JSON-RPC error message go in (the act step
 * redacts the session's secret values from tool errors; `redact` takes the header secrets out
 * first). A listing's failure goes into the turn's instructions, which the act step never sees,
 * so it gets no server text (`redact` null). An SDK or network error's own message never goes in.
 */
import { ToolError } from '../types.js';
import { McpAddressError } from './address-check.js';
import { McpResponseTooLargeError } from './guarded-fetch.js';

const MAX_SERVER_MESSAGE_CHARS = 500;

/** The SDK's JSON-RPC error codes we branch on (its `ErrorCode`; named here so the SDK loads only when a server is used). */
const McpErrorCodes = { ConnectionClosed: -32000, RequestTimeout: -32001 } as const;

/** The SDK's `McpError`, recognised without importing it. */
function isMcpError(err: unknown): err is Error & { code: number } {
  return err instanceof Error && err.name === 'McpError' && typeof (err as { code?: unknown }).code === 'number';
}

/** The abort reason when `signal` fired (a cancelled turn: rethrown as is), else a ToolError. */
export function mcpFailure(
  err: unknown,
  server: string,
  ctx: { signal: AbortSignal; failure: string | null; timeoutMs: number; redact: ((t: string) => string) | null },
): unknown {
  if (ctx.signal.aborted && !isDeadline(ctx.signal.reason)) return ctx.signal.reason;
  if (err instanceof ToolError) return err;
  const failure = ctx.failure ?? (err as { mcpFailure?: string | null } | null)?.mcpFailure ?? null;
  return new ToolError(`MCP server "${server}" ${failure ?? describe(err, ctx.timeoutMs, ctx.redact)}.`);
}

function describe(err: unknown, timeoutMs: number, redact: ((t: string) => string) | null): string {
  if (isDeadline(err)) return `did not answer within ${timeoutMs} ms`;
  if (err instanceof McpAddressError || err instanceof McpResponseTooLargeError) return err.message;
  if (isMcpError(err)) {
    if (err.code === McpErrorCodes.RequestTimeout) return `did not answer within ${timeoutMs} ms`;
    if (err.code === McpErrorCodes.ConnectionClosed) return 'closed the connection';
    if (!redact) return `returned an error (${err.code})`;
    const text = redact(err.message.replace(/^MCP error -?\d+: /, '')).slice(0, MAX_SERVER_MESSAGE_CHARS);
    return `returned an error (${err.code}): ${text}`;
  }
  if (err instanceof SyntaxError || (err instanceof Error && /ZodError/.test(err.name))) return 'sent an answer that is not valid JSON-RPC';
  const status = (err as { code?: unknown }).code;
  if (typeof status === 'number' && status >= 100) return `answered HTTP ${status}`;
  const code = typeof status === 'string' ? ` (${status})` : '';
  return `could not be reached${code}`;
}

function isDeadline(err: unknown): boolean {
  return err instanceof DOMException && err.name === 'TimeoutError';
}
