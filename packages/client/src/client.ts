import createFetchClient, { type Client as FetchClient } from 'openapi-fetch';
import { apiErrorOf, ApiError, ConnectionError } from './errors.js';
import type { components, operations, paths } from './generated/openapi.js';
import { SessionEventStream, type StreamOptions, type StreamTransport } from './stream.js';
import { sendAndWait, serveClientTools, type ClientToolHandlers, type TurnOptions, type TurnResult } from './turns.js';
import type {
  AgentCreate,
  AgentPatch,
  Agent,
  ClientToolResult,
  ToolApprovalDecision,
  InputPart,
  SendMessageOptions,
  SessionCreate,
  SessionPatch,
  UserCreate,
  WebhookEndpointCreate,
  WebhookEndpointPatch,
} from './types.js';

type Schemas = components['schemas'];
type QueryOf<K extends keyof operations> = operations[K]['parameters'] extends { query?: infer Q } ? NonNullable<Q> : never;

export interface ClientOptions {
  /** Where the service listens, with any API prefix (`https://host/agents-api`). */
  baseUrl: string;
  /** An API key or access token, sent as `Authorization: Bearer …`. */
  apiKey?: string;
  /** Called before each request instead of `apiKey` (e.g. to refresh an access token). */
  token?: () => string | undefined | Promise<string | undefined>;
  /** A fetch implementation (default: the global one). */
  fetch?: typeof fetch;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
}

/**
 * A client of the Agent Session Service. `api` is the fully typed openapi-fetch client of every
 * route (types generated from the service's OpenAPI document); the resource methods below wrap
 * the common ones and throw `ApiError` on non-2xx answers; `sessions.stream()` is the resuming
 * SSE iterator.
 */
export function createAgentSessionClient(options: ClientOptions) {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const baseFetch: typeof fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  // fetch's network failure says only "fetch failed": name the URL and the cause instead.
  const doFetch: typeof fetch = async (input, init) => {
    try {
      return await baseFetch(input, init);
    } catch (err) {
      if (!(err instanceof TypeError) || err instanceof ConnectionError) throw err;
      throw new ConnectionError(input instanceof Request ? input.url : String(input), err);
    }
  };
  const authorization = async (): Promise<string | undefined> => {
    const token = options.token ? await options.token() : options.apiKey;
    return token ? `Bearer ${token}` : undefined;
  };
  const api: FetchClient<paths> = createFetchClient<paths>({ baseUrl, fetch: (req: Request) => doFetch(req), headers: options.headers });
  api.use({
    async onRequest({ request }) {
      const auth = await authorization();
      if (auth && !request.headers.has('authorization')) request.headers.set('authorization', auth);
      return request;
    },
  });

  /** The body of a 2xx answer; throws `ApiError` otherwise. */
  async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
    const { data, error, response } = await call;
    if (!response.ok) throw new ApiError(response.status, error);
    return data as T;
  }

  /** Requests with a non-JSON body or answer (agent import/export). */
  async function raw(method: string, path: string, init: { body?: string; contentType?: string } = {}): Promise<Response> {
    const headers: Record<string, string> = { ...options.headers };
    const auth = await authorization();
    if (auth) headers['authorization'] = auth;
    if (init.contentType) headers['content-type'] = init.contentType;
    const res = await doFetch(baseUrl + path, { method, headers, body: init.body });
    if (!res.ok) throw await apiErrorOf(res);
    return res;
  }

  const transport: StreamTransport = {
    baseUrl,
    fetch: doFetch,
    authorization,
    streamToken: async (id) => (await sessions.streamToken(id)).token,
  };
  const id = (v: string) => ({ path: { id: v } });

  const agents = {
    list: (query: QueryOf<'get_agents'> = {}) => ok(api.GET('/v1/agents', { params: { query } })),
    get: (agentId: string) => ok(api.GET('/v1/agents/{id}', { params: id(agentId) })),
    create: (body: AgentCreate) => ok(api.POST('/v1/agents', { body })),
    update: (agentId: string, body: AgentPatch) => ok(api.PATCH('/v1/agents/{id}', { params: id(agentId), body })),
    archive: (agentId: string) => ok(api.DELETE('/v1/agents/{id}', { params: id(agentId) })),
    examples: () => ok(api.GET('/v1/agent-examples')),
    /** Creates an agent from Markdown with YAML front matter, YAML or JSON text. */
    import: async (definition: string, contentType = 'text/markdown'): Promise<Agent> =>
      (await raw('POST', '/v1/agents/import', { body: definition, contentType })).json() as Promise<Agent>,
    importExample: async (name: string): Promise<Agent> =>
      (await raw('POST', `/v1/agents/import?from-example=${encodeURIComponent(name)}`)).json() as Promise<Agent>,
    /** The agent as Markdown with YAML front matter (imports back equal). */
    export: async (agentId: string): Promise<string> => (await raw('GET', `/v1/agents/${encodeURIComponent(agentId)}/export`)).text(),
  };

  const sessions = {
    list: (query: Partial<QueryOf<'get_sessions'>> = {}) =>
      ok(api.GET('/v1/sessions', { params: { query: { offset: 0, limit: 20, ...query } } })),
    get: (sessionId: string) => ok(api.GET('/v1/sessions/{id}', { params: id(sessionId) })),
    create: (body: SessionCreate) => ok(api.POST('/v1/sessions', { body })),
    update: (sessionId: string, body: SessionPatch) => ok(api.PATCH('/v1/sessions/{id}', { params: id(sessionId), body })),
    remove: (sessionId: string) => ok(api.DELETE('/v1/sessions/{id}', { params: id(sessionId) })),
    /** Starts a turn; answers the stored user message (its id is `context.input_message_id` of the turn's events). */
    sendMessage: (sessionId: string, input: string | InputPart[], opts: SendMessageOptions = {}) => {
      const content = typeof input === 'string' ? [{ type: 'text' as const, text: input }] : input;
      return ok(
        api.POST('/v1/sessions/{id}/messages', {
          params: id(sessionId),
          body: {
            message: { content, ...(opts.controls ? { controls: opts.controls } : {}), ...(opts.tags ? { tags: opts.tags } : {}) },
            ...(opts.metadata ? { metadata: opts.metadata } : {}),
            ...(opts.onBusy ? { on_busy: opts.onBusy } : {}),
          },
        }),
      );
    },
    cancel: (sessionId: string) => ok(api.POST('/v1/sessions/{id}/cancel', { params: id(sessionId) })),
    /**
     * Compacts the history now (a turn of its own: follow `turn_id` to `session.compacted` and
     * `session.idled`; `cancel` stops it). 409 while a turn runs or before the first message.
     */
    compact: (sessionId: string, opts: { instructions?: string } = {}) =>
      ok(
        api.POST('/v1/sessions/{id}/compact', {
          params: id(sessionId),
          body: opts.instructions ? { instructions: opts.instructions } : {},
        }),
      ),
    /** The messages waiting for a turn (sent with `onBusy: 'enqueue'` or `'interrupt'`), in the order they will run. */
    queue: (sessionId: string) => ok(api.GET('/v1/sessions/{id}/queue', { params: id(sessionId) })),
    /** Cancels a queued message (409 once its turn is starting). */
    cancelQueued: (sessionId: string, queuedId: string) =>
      ok(api.DELETE('/v1/sessions/{id}/queue/{queued_id}', { params: { path: { id: sessionId, queued_id: queuedId } } })),
    submitToolResults: (sessionId: string, toolResults: ClientToolResult[]) =>
      ok(api.POST('/v1/sessions/{id}/tool-results', { params: id(sessionId), body: { tool_results: toolResults } })),
    /** Approves or denies tool calls waiting for a person (`tool.approval_requested`). */
    submitApprovals: (sessionId: string, approvals: ToolApprovalDecision[]) =>
      ok(api.POST('/v1/sessions/{id}/approvals', { params: id(sessionId), body: { approvals } })),
    /** One page of stored events (polling). */
    events: (sessionId: string, query: QueryOf<'get_sessions_by_id_events'> = {}) =>
      ok(api.GET('/v1/sessions/{id}/events', { params: { ...id(sessionId), query } })),
    /** The id of the session's newest event (a `since` for a stream that should see only what comes next). */
    lastEventId: async (sessionId: string): Promise<string | undefined> =>
      (await sessions.events(sessionId, { order_desc: true, limit: 1 })).data[0]?.id,
    messages: (sessionId: string) => ok(api.GET('/v1/sessions/{id}/messages', { params: id(sessionId) })),
    streamToken: (sessionId: string) => ok(api.POST('/v1/sessions/{id}/stream-token', { params: id(sessionId) })),
    /** The session's events as a resuming async iterator (see `SessionEventStream`). */
    stream: (sessionId: string, opts: StreamOptions = {}) => new SessionEventStream(transport, sessionId, opts),
    /** Sends a message and resolves when its turn has ended (answering client tools with `opts.tools`). */
    sendAndWait: (sessionId: string, input: string | InputPart[], opts: TurnOptions = {}): Promise<TurnResult> =>
      sendAndWait(client, sessionId, input, opts),
    /** Answers every client tool call of the session until `signal` aborts. */
    serveClientTools: (sessionId: string, tools: ClientToolHandlers, opts: { signal?: AbortSignal; since?: string } = {}) =>
      serveClientTools(client, sessionId, tools, opts),
  };

  const auth = {
    me: () => ok(api.GET('/v1/auth/me')),
    apiKeys: {
      list: (query: QueryOf<'get_auth_api_keys'> = { scope: 'own' }) => ok(api.GET('/v1/auth/api-keys', { params: { query } })),
      create: (body: Schemas['ApiKeyCreate']) => ok(api.POST('/v1/auth/api-keys', { body })),
      revoke: (keyId: string) => ok(api.DELETE('/v1/auth/api-keys/{id}', { params: id(keyId) })),
    },
  };

  const users = {
    list: () => ok(api.GET('/v1/users')),
    create: (body: UserCreate) => ok(api.POST('/v1/users', { body })),
    remove: (userId: string) => ok(api.DELETE('/v1/users/{id}', { params: id(userId) })),
  };

  const delivery = (endpointId: string, deliveryId: string) => ({ path: { id: endpointId, delivery_id: deliveryId } });
  /** The organisation's webhook endpoints (admins only). Verify deliveries with the `standardwebhooks` package. */
  const webhooks = {
    list: () => ok(api.GET('/v1/webhooks')),
    get: (endpointId: string) => ok(api.GET('/v1/webhooks/{id}', { params: id(endpointId) })),
    /** Registers an endpoint; the answer's `secret` is shown this once. */
    create: (body: WebhookEndpointCreate) => ok(api.POST('/v1/webhooks', { body })),
    update: (endpointId: string, body: WebhookEndpointPatch) => ok(api.PATCH('/v1/webhooks/{id}', { params: id(endpointId), body })),
    remove: (endpointId: string) => ok(api.DELETE('/v1/webhooks/{id}', { params: id(endpointId) })),
    /** A new secret (shown once); the previous one keeps signing beside it for `overlap_seconds`. */
    rotateSecret: (endpointId: string, body: Schemas['WebhookSecretRotate'] = {}) =>
      ok(api.POST('/v1/webhooks/{id}/rotate-secret', { params: id(endpointId), body })),
    testSend: (endpointId: string) => ok(api.POST('/v1/webhooks/{id}/test', { params: id(endpointId) })),
    deliveries: (endpointId: string, query: QueryOf<'get_webhooks_by_id_deliveries'> = {}) =>
      ok(api.GET('/v1/webhooks/{id}/deliveries', { params: { ...id(endpointId), query } })),
    delivery: (endpointId: string, deliveryId: string) =>
      ok(api.GET('/v1/webhooks/{id}/deliveries/{delivery_id}', { params: delivery(endpointId, deliveryId) })),
    redeliver: (endpointId: string, deliveryId: string) =>
      ok(api.POST('/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver', { params: delivery(endpointId, deliveryId) })),
  };

  const client = {
    baseUrl,
    api,
    health: () => ok(api.GET('/health')),
    agents,
    sessions,
    auth,
    users,
    webhooks,
    capabilities: () => ok(api.GET('/v1/capabilities')),
  };
  return client;
}

export type AgentSessionClient = ReturnType<typeof createAgentSessionClient>;
