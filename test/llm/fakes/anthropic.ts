import {
  DEFAULT_FAKE_USAGE,
  fragments,
  sseFrame,
  startFakeServer,
  type FakeLlmServer,
  type FakeReply,
  type FakeServerOptions,
  type VendorCodec,
} from './fake-server.js';

/**
 * Fake Anthropic API: `POST /v1/messages` (Messages SSE: message_start,
 * content_block_start/delta/stop, ping, message_delta, message_stop) and `GET /v1/models`.
 * Use `base_url = origin`.
 */

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  404: 'not_found_error',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

export const ANTHROPIC_ERROR_SECRET = 'invalid x-api-key VENDOR-BODY-SECRET';

function encode(reply: FakeReply, body: any): string[] {
  const frames: string[] = [];
  const ev = (type: string, data: object = {}) => frames.push(sseFrame({ type, ...data }, type));
  const u = reply.usage ?? DEFAULT_FAKE_USAGE;
  ev('message_start', {
    message: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: body?.model ?? 'claude',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: u.input_tokens - u.cache_read_tokens,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: u.cache_read_tokens,
        output_tokens: 1,
      },
    },
  });
  let index = 0;
  if (reply.thinking?.length) {
    ev('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
    for (const thinking of reply.thinking) ev('content_block_delta', { index, delta: { type: 'thinking_delta', thinking } });
    ev('content_block_delta', { index, delta: { type: 'signature_delta', signature: reply.signature ?? 'sig-anthropic' } });
    ev('content_block_stop', { index: index++ });
  }
  if (reply.text?.length) {
    ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
    ev('ping');
    for (const text of reply.text) ev('content_block_delta', { index, delta: { type: 'text_delta', text } });
    ev('content_block_stop', { index: index++ });
  }
  for (const call of reply.tool_calls ?? []) {
    ev('content_block_start', { index, content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} } });
    for (const partial_json of fragments(JSON.stringify(call.arguments))) {
      ev('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json } });
    }
    ev('content_block_stop', { index: index++ });
  }
  const stop_reason = reply.stop === 'max_tokens' ? 'max_tokens' : reply.tool_calls?.length ? 'tool_use' : 'end_turn';
  ev('message_delta', { delta: { stop_reason, stop_sequence: null }, usage: { output_tokens: u.output_tokens } });
  ev('message_stop');
  return frames;
}

export const anthropicCodec: VendorCodec = {
  route(method, url) {
    const path = url.split('?')[0];
    if (method === 'POST' && path === '/v1/messages') return 'generate';
    if (method === 'GET' && path === '/v1/models') return 'models';
    return undefined;
  },
  /** SDK 1.x sends the key as `Authorization: Bearer`; older clients send `x-api-key`. */
  authorized: (headers, apiKey) => headers['x-api-key'] === apiKey || headers.authorization === `Bearer ${apiKey}`,
  encode,
  errorBody(status) {
    const type = ERROR_TYPES[status] ?? 'api_error';
    return { type: 'error', error: { type, message: status === 401 ? ANTHROPIC_ERROR_SECRET : `fake ${type}` } };
  },
  modelsBody: (models) => ({
    data: models.map((m) => ({
      type: 'model',
      id: m.id,
      display_name: m.display_name,
      created_at: '2025-01-01T00:00:00Z',
      ...(m.input_limit ? { max_input_tokens: m.input_limit } : {}),
      ...(m.output_limit ? { max_tokens: m.output_limit } : {}),
    })),
    has_more: false,
    first_id: models[0]?.id ?? null,
    last_id: models.at(-1)?.id ?? null,
  }),
};

/** Starts the fake Anthropic server. */
export function startFakeAnthropic(opts: FakeServerOptions = {}): Promise<FakeLlmServer> {
  return startFakeServer(anthropicCodec, opts);
}
