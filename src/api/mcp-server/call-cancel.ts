/**
 * MCP cancellation of a running `/v1/mcp` tools/call (decision 0094, "Serving agents"). In
 * stateless mode the client's `notifications/cancelled` is a POST of its own, answered by a new
 * server object, perhaps on another instance: the SDK's own handler looks for the request in
 * that object and finds nothing. So a call listens on a control address derived from who asks
 * and which request it is, and the notification is sent there over the bus's signals (core
 * NATS in distributed mode, so it reaches the instance that holds the call; in-process in
 * embedded mode, which is one process). Like MCP cancellation, this is best effort: a signal
 * is at-most-once, and a notification that overtakes its call's POST finds no listener.
 *
 * The JSON-RPC id alone names nothing: every client numbers its requests from 0. The address
 * also takes the MCP session id the server issued at `initialize` (the client sends it on
 * every later request) and the caller's organisation and user, so a notification can only
 * reach a call of the same client of the same caller. A request without an MCP session id
 * (a client that did not initialize with us) cannot be cancelled this way, only by closing it.
 */
import { createHash } from 'node:crypto';
import type { Principal } from '../../auth/index.js';
import type { Signals } from '../../bus/index.js';
import type { Logger } from '../../log.js';

/** The MCP session id header, lower-cased as our pipeline hands headers over. */
export const MCP_SESSION_HEADER = 'mcp-session-id';

/** Who sent a request: the caller and the MCP session of their client (absent: not cancellable). */
export interface McpCaller {
  principal: Principal;
  mcpSessionId?: string;
}

/**
 * The control address of one request: a UUID (the form signal addresses take: they become
 * NATS subject tokens) hashed from the caller, the MCP session and the JSON-RPC id. Version 8
 * (RFC 9562's custom layout), so it can never equal a session's id (v7), whose signals the
 * workers and SSE streams listen to.
 */
export function callAddress(caller: McpCaller & { mcpSessionId: string }, requestId: string | number): string {
  const { org_id, user_id } = caller.principal;
  const hex = createHash('sha256')
    .update(JSON.stringify(['mcp-call', org_id, user_id, caller.mcpSessionId, requestId]))
    .digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * Listens for the cancellation of one request while it runs; `stop()` when it has ended.
 * Without an MCP session id the signal never fires.
 */
export function watchCancel(signals: Signals, caller: McpCaller, requestId: string | number): { signal: AbortSignal; stop: () => void } {
  const cancelled = new AbortController();
  if (caller.mcpSessionId === undefined) return { signal: cancelled.signal, stop: () => {} };
  const address = callAddress({ ...caller, mcpSessionId: caller.mcpSessionId }, requestId);
  const stop = signals.subscribe(address, (s) => {
    if (s.type === 'cancel') cancelled.abort(new Error('the MCP client cancelled the request'));
  });
  return { signal: cancelled.signal, stop };
}

/** Passes a client's `notifications/cancelled` on to the instance running that request, if any. */
export function sendCancel(deps: { signals: Signals; log: Logger }, caller: McpCaller, requestId: string | number | undefined): void {
  if (caller.mcpSessionId === undefined || requestId === undefined) return;
  const address = callAddress({ ...caller, mcpSessionId: caller.mcpSessionId }, requestId);
  deps.signals.send({ type: 'cancel', session_id: address }).catch((err: unknown) => {
    deps.log.warn({ err }, 'could not pass on an MCP cancellation');
  });
}
