/**
 * One MCP client connection (official SDK) to one server with one set of resolved headers:
 * opened with Streamable HTTP, or SSE for older servers, through the guarded fetch; its tool list
 * cached for a TTL and dropped on `notifications/tools/list_changed`. A server that breaks the
 * protocol (a body past the cap, a message that is not JSON-RPC) fails the connection at once:
 * its pending requests reject instead of waiting for their deadline, and the pool opens a new one
 * next time.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolListChangedNotificationSchema, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import { createGuardedFetch, type GuardedFetchOptions } from './guarded-fetch.js';

export type McpTransportKind = 'auto' | 'streamable_http' | 'sse';

/** Where to connect: the URL, the headers with secrets filled in, and the transport. */
export interface McpTarget {
  url: URL;
  headers: Record<string, string>;
  transport: McpTransportKind;
}

export interface ToolListing {
  tools: Tool[];
  /** The server had more tools than were read (`maxTools`). */
  more: boolean;
}

/** Pages of `tools/list` read at most (a server that pages forever stops here). */
const MAX_LIST_PAGES = 20;

/**
 * Tool output schemas are not checked: the result goes to the LLM as text either way, and
 * compiling a hostile server's schema could take the event loop for seconds.
 */
const NO_OUTPUT_VALIDATION: jsonSchemaValidator = {
  getValidator: () => (input: unknown) => ({ valid: true, data: input as never, errorMessage: undefined }),
};

export interface McpConnectionOptions extends Omit<GuardedFetchOptions, 'onViolation'> {
  toolsTtlMs: number;
  now(): number;
}

export class McpConnection {
  #client: Client;
  readonly #fetch;
  readonly #opts: McpConnectionOptions;
  #tools: { at: number; listing: Promise<ToolListing> } | null = null;
  /** Why the server was cut off (a protocol violation), shown instead of the SDK's error. */
  failure: string | null = null;
  closed = false;
  lastUsed: number;
  onClose: () => void = () => undefined;

  constructor(opts: McpConnectionOptions) {
    this.#opts = opts;
    this.lastUsed = opts.now();
    this.#fetch = createGuardedFetch({ ...opts, onViolation: (message) => this.#fail(message) });
    this.#client = this.#newClient();
  }

  /** Initialises the session with the server (falls back to SSE for `auto` when Streamable HTTP is refused). */
  async open(target: McpTarget, signal: AbortSignal, timeoutMs: number): Promise<void> {
    const attempt = (kind: 'streamable_http' | 'sse') =>
      this.#bounded(this.#client.connect(this.#transport(kind, target), { signal, timeout: timeoutMs }), signal);
    if (target.transport !== 'auto') return attempt(target.transport);
    try {
      await attempt('streamable_http');
    } catch (err) {
      const refused = err instanceof StreamableHTTPError && err.code !== undefined && err.code >= 400 && err.code < 500;
      if (!refused || signal.aborted || this.failure) throw err;
      // The refused attempt closed its client; the fallback gets a new one (the first one's close is not ours).
      this.closed = false;
      this.#client = this.#newClient();
      await attempt('sse');
    }
  }

  /** The server's tools, at most `maxTools`, from the cache while fresh. */
  listTools(maxTools: number, signal: AbortSignal, timeoutMs: number): Promise<ToolListing> {
    this.lastUsed = this.#opts.now();
    const cached = this.#tools;
    if (cached && this.#opts.now() - cached.at < this.#opts.toolsTtlMs) return cached.listing;
    const listing = this.#bounded(this.#listAll(maxTools, signal, timeoutMs), signal);
    const entry = { at: this.#opts.now(), listing };
    this.#tools = entry;
    listing.catch(() => {
      if (this.#tools === entry) this.#tools = null;
    });
    return listing;
  }

  /** Calls a tool; an abort of `signal` sends the server `notifications/cancelled`. */
  callTool(name: string, args: Record<string, unknown>, signal: AbortSignal, timeoutMs: number): Promise<CallToolResult> {
    this.lastUsed = this.#opts.now();
    const call = this.#client.callTool({ name, arguments: args }, undefined, { signal, timeout: timeoutMs, maxTotalTimeout: timeoutMs });
    return this.#bounded(call as Promise<CallToolResult>, signal);
  }

  /** Ends the MCP session and drops the kept-alive sockets (also after the server closed it). */
  async close(): Promise<void> {
    const open = !this.closed;
    this.#closed();
    if (open) await this.#client.close().catch(() => undefined);
    this.#fetch.close();
  }

  async #listAll(maxTools: number, signal: AbortSignal, timeoutMs: number): Promise<ToolListing> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const result = await this.#client.listTools(cursor === undefined ? undefined : { cursor }, { signal, timeout: timeoutMs });
      tools.push(...result.tools);
      cursor = result.nextCursor;
      if (cursor === undefined || tools.length > maxTools) break;
    }
    return { tools: tools.slice(0, maxTools), more: tools.length > maxTools || cursor !== undefined };
  }

  #newClient(): Client {
    const client = new Client(
      { name: 'agent-session-service', version: '1' },
      { capabilities: {}, jsonSchemaValidator: NO_OUTPUT_VALIDATION },
    );
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      this.#tools = null;
    });
    client.onerror = (err) => {
      if (err instanceof SyntaxError || err.name === 'ZodError' || err.name === '$ZodError')
        this.#fail('sent an answer that is not valid JSON-RPC');
    };
    client.onclose = () => {
      if (client === this.#client) this.#closed();
    };
    return client;
  }

  #transport(kind: 'streamable_http' | 'sse', target: McpTarget): Transport {
    const common = { fetch: this.#fetch.fetch, requestInit: { headers: target.headers } };
    return kind === 'sse' ? new SSEClientTransport(target.url, common) : new StreamableHTTPClientTransport(target.url, common);
  }

  /** `work`, or the abort reason (or the connection's failure) as soon as either comes: the SDK's SSE start has no deadline of its own. */
  #bounded<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
    work.catch(() => undefined);
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  #fail(message: string): void {
    if (this.failure) return;
    this.failure = message;
    void this.close();
  }

  #closed(): void {
    if (this.closed) return;
    this.closed = true;
    this.#tools = null;
    this.onClose();
  }
}
