import {
  DEFAULT_FAKE_USAGE,
  sseFrame,
  startFakeServer,
  type FakeLlmServer,
  type FakeModel,
  type FakeReply,
  type FakeServerOptions,
  type VendorCodec,
} from './fake-server.js';

/**
 * Fake Gemini API: `POST /v1beta/models/{model}:streamGenerateContent?alt=sse` (data-only
 * SSE, CRLF framed, `functionCall` parts, `usageMetadata`) and `GET /v1beta/models`.
 * Use `base_url = origin`.
 */

const STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

export const GEMINI_ERROR_SECRET = 'API key not valid VENDOR-BODY-SECRET';
/** The RetryInfo delay the fake puts in 429 bodies. */
export const GEMINI_RETRY_DELAY_S = 2;

function encode(reply: FakeReply, body: any): string[] {
  const u = reply.usage ?? DEFAULT_FAKE_USAGE;
  const frame = (parts: object[], extra: object = {}) =>
    sseFrame(
      { candidates: [{ content: { parts, role: 'model' }, index: 0, ...extra }], modelVersion: 'gemini-fake', responseId: 'r1' },
      undefined,
      '\r\n',
    );
  const frames: string[] = [];
  for (const text of reply.thinking ?? []) frames.push(frame([{ text, thought: true }]));
  for (const [i, text] of (reply.text ?? []).entries()) {
    const sig = i === 0 && reply.signature && !reply.tool_calls?.length ? { thoughtSignature: reply.signature } : {};
    frames.push(frame([{ text, ...sig }]));
  }
  if (reply.tool_calls?.length) {
    const parts = reply.tool_calls.map((c, i) => ({
      functionCall: { name: c.name, args: c.arguments, ...(c.id.startsWith('keep_') ? { id: c.id } : {}) },
      ...(i === 0 && reply.signature ? { thoughtSignature: reply.signature } : {}),
    }));
    frames.push(frame(parts));
  }
  const usageMetadata = {
    promptTokenCount: u.input_tokens,
    candidatesTokenCount: u.output_tokens,
    cachedContentTokenCount: u.cache_read_tokens,
    totalTokenCount: u.input_tokens + u.output_tokens,
  };
  const finishReason = reply.stop === 'max_tokens' ? 'MAX_TOKENS' : 'STOP';
  frames.push(
    sseFrame(
      {
        candidates: [{ content: { parts: [{ text: '' }], role: 'model' }, finishReason, index: 0 }],
        usageMetadata,
        modelVersion: 'gemini-fake',
      },
      undefined,
      '\r\n',
    ),
  );
  void body;
  return frames;
}

function modelsBody(models: FakeModel[]): object {
  return {
    models: [
      ...models.map((m) => ({
        name: `models/${m.id}`,
        displayName: m.display_name,
        supportedGenerationMethods: ['generateContent', 'countTokens'],
        ...(m.input_limit ? { inputTokenLimit: m.input_limit } : {}),
        ...(m.output_limit ? { outputTokenLimit: m.output_limit } : {}),
      })),
      { name: 'models/text-embedding-fake', displayName: 'Embedding', supportedGenerationMethods: ['embedContent'] },
    ],
  };
}

export const geminiCodec: VendorCodec = {
  route(method, url) {
    const path = url.split('?')[0]!;
    if (method === 'POST' && /^\/v1beta\/models\/[^/]+:streamGenerateContent$/.test(path) && url.includes('alt=sse')) return 'generate';
    if (method === 'GET' && path === '/v1beta/models') return 'models';
    return undefined;
  },
  authorized: (headers, apiKey) => headers['x-goog-api-key'] === apiKey,
  encode,
  errorBody(status) {
    const details = status === 429 ? [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${GEMINI_RETRY_DELAY_S}s` }] : [];
    return {
      error: {
        code: status,
        message: status === 401 ? GEMINI_ERROR_SECRET : `fake ${STATUS[status] ?? 'ERROR'}`,
        status: STATUS[status] ?? 'UNKNOWN',
        details,
      },
    };
  },
  modelsBody,
};

/** Starts the fake Gemini server. Tool calls whose id starts with `keep_` carry that id. */
export function startFakeGemini(opts: FakeServerOptions = {}): Promise<FakeLlmServer> {
  return startFakeServer(geminiCodec, opts);
}
