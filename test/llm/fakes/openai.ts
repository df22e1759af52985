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
 * Fake OpenAI API: `POST /v1/responses` (Responses SSE), `POST /v1/chat/completions`
 * (Chat Completions chunks), `GET /v1/models`. Use `base_url = origin + '/v1'`.
 */

const ERRORS: Record<number, { type: string; code: string | null }> = {
  400: { type: 'invalid_request_error', code: null },
  401: { type: 'invalid_request_error', code: 'invalid_api_key' },
  404: { type: 'invalid_request_error', code: 'unknown_url' },
  429: { type: 'requests', code: 'rate_limit_exceeded' },
  500: { type: 'server_error', code: null },
};

/** Vendor text that must never reach an LlmError message. */
export const OPENAI_ERROR_SECRET = 'Incorrect API key provided: sk-VENDOR-BODY-SECRET';

function responsesFrames(reply: FakeReply, body: any): string[] {
  let seq = 0;
  const frames: string[] = [];
  const ev = (type: string, data: object) => frames.push(sseFrame({ type, sequence_number: seq++, ...data }, type));
  const output: any[] = [];
  const base = {
    id: 'resp_1',
    object: 'response',
    created_at: 1,
    model: body?.model ?? 'gpt',
    output,
    error: null,
    incomplete_details: null,
  };
  ev('response.created', { response: { ...base, status: 'in_progress', usage: null } });
  ev('response.in_progress', { response: { ...base, status: 'in_progress', usage: null } });
  if (reply.thinking?.length) {
    const item = { type: 'reasoning', id: 'rs_1', summary: [] as object[] };
    const output_index = output.length;
    ev('response.output_item.added', { output_index, item });
    ev('response.reasoning_summary_part.added', {
      item_id: item.id,
      output_index,
      summary_index: 0,
      part: { type: 'summary_text', text: '' },
    });
    for (const delta of reply.thinking)
      ev('response.reasoning_summary_text.delta', { item_id: item.id, output_index, summary_index: 0, delta });
    const text = reply.thinking.join('');
    ev('response.reasoning_summary_text.done', { item_id: item.id, output_index, summary_index: 0, text });
    ev('response.reasoning_summary_part.done', { item_id: item.id, output_index, summary_index: 0, part: { type: 'summary_text', text } });
    const done = { ...item, summary: [{ type: 'summary_text', text }] };
    output.push(done);
    ev('response.output_item.done', { output_index, item: done });
  }
  if (reply.text?.length) {
    const output_index = output.length;
    const item = { type: 'message', id: 'msg_1', role: 'assistant', status: 'in_progress', content: [] as object[] };
    ev('response.output_item.added', { output_index, item });
    ev('response.content_part.added', {
      item_id: item.id,
      output_index,
      content_index: 0,
      part: { type: 'output_text', text: '', annotations: [] },
    });
    for (const delta of reply.text)
      ev('response.output_text.delta', { item_id: item.id, output_index, content_index: 0, delta, logprobs: [] });
    const text = reply.text.join('');
    const part = { type: 'output_text', text, annotations: [] };
    ev('response.output_text.done', { item_id: item.id, output_index, content_index: 0, text, logprobs: [] });
    ev('response.content_part.done', { item_id: item.id, output_index, content_index: 0, part });
    const done = { ...item, status: 'completed', content: [part] };
    output.push(done);
    ev('response.output_item.done', { output_index, item: done });
  }
  for (const [i, call] of (reply.tool_calls ?? []).entries()) {
    const output_index = output.length;
    const args = JSON.stringify(call.arguments);
    const item = { type: 'function_call', id: `fc_${i}`, call_id: call.id, name: call.name, arguments: '', status: 'in_progress' };
    ev('response.output_item.added', { output_index, item });
    for (const delta of fragments(args)) ev('response.function_call_arguments.delta', { item_id: item.id, output_index, delta });
    ev('response.function_call_arguments.done', { item_id: item.id, output_index, arguments: args });
    const done = { ...item, arguments: args, status: 'completed' };
    output.push(done);
    ev('response.output_item.done', { output_index, item: done });
  }
  const u = reply.usage ?? DEFAULT_FAKE_USAGE;
  const usage = {
    input_tokens: u.input_tokens,
    input_tokens_details: { cached_tokens: u.cache_read_tokens },
    output_tokens: u.output_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: u.input_tokens + u.output_tokens,
  };
  if (reply.stop === 'max_tokens') {
    ev('response.incomplete', { response: { ...base, status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, usage } });
  } else {
    ev('response.completed', { response: { ...base, status: 'completed', usage } });
  }
  return frames;
}

function chatFrames(reply: FakeReply, body: any): string[] {
  const chunk = (delta: object, finish_reason: string | null = null) =>
    sseFrame({
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      created: 1,
      model: body?.model ?? 'gpt',
      choices: [{ index: 0, delta, logprobs: null, finish_reason }],
    });
  const frames = [chunk({ role: 'assistant', content: '', refusal: null })];
  for (const text of reply.thinking ?? []) frames.push(chunk({ reasoning_content: text }));
  for (const content of reply.text ?? []) frames.push(chunk({ content }));
  for (const [index, call] of (reply.tool_calls ?? []).entries()) {
    frames.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
    for (const args of fragments(JSON.stringify(call.arguments)))
      frames.push(chunk({ tool_calls: [{ index, function: { arguments: args } }] }));
  }
  const finish = reply.stop === 'max_tokens' ? 'length' : reply.tool_calls?.length ? 'tool_calls' : 'stop';
  frames.push(chunk({}, finish));
  if (body?.stream_options?.include_usage) {
    const u = reply.usage ?? DEFAULT_FAKE_USAGE;
    const usage = {
      prompt_tokens: u.input_tokens,
      completion_tokens: u.output_tokens,
      total_tokens: u.input_tokens + u.output_tokens,
      prompt_tokens_details: { cached_tokens: u.cache_read_tokens },
    };
    frames.push(sseFrame({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: body.model, choices: [], usage }));
  }
  frames.push(sseFrame('[DONE]'));
  return frames;
}

export const openAiCodec: VendorCodec = {
  route(method, url) {
    const path = url.split('?')[0];
    if (method === 'POST' && (path === '/v1/responses' || path === '/v1/chat/completions')) return 'generate';
    if (method === 'GET' && path === '/v1/models') return 'models';
    return undefined;
  },
  authorized: (headers, apiKey) => headers.authorization === `Bearer ${apiKey}`,
  encode: (reply, body, url) => (url.split('?')[0] === '/v1/chat/completions' ? chatFrames(reply, body) : responsesFrames(reply, body)),
  errorBody(status) {
    const e = ERRORS[status] ?? ERRORS[500]!;
    return { error: { message: status === 401 ? OPENAI_ERROR_SECRET : `fake error ${status}`, type: e.type, param: null, code: e.code } };
  },
  modelsBody: (models) => ({ object: 'list', data: models.map((m) => ({ id: m.id, object: 'model', created: 1, owned_by: 'system' })) }),
};

/** Starts the fake OpenAI server (Responses + Chat Completions + models). */
export function startFakeOpenAi(opts: FakeServerOptions = {}): Promise<FakeLlmServer> {
  return startFakeServer(openAiCodec, opts);
}
