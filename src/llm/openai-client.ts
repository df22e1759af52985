import type { EventSourceMessage } from 'eventsource-parser';
import { APIError, OpenAI } from 'openai';
import type { LlmModelInfo, LlmProviderConfig, LlmUserPart } from './types.js';
import { partsBody, responseBody, vendorFetch } from './vendor-fetch.js';
import { vendorSseItems } from './vendor-sse.js';

export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';

/** Model ids that are not chat/reasoning models (embeddings, audio, images, moderation…). */
const NON_CHAT_MODEL = /embedding|whisper|tts|dall-e|davinci|babbage|moderation|transcribe|image|realtime|audio|sora|search/i;

/**
 * An OpenAI SDK client for one provider record. SDK retries are off: `streamWithRetries`
 * owns the retry policy. The base URL is always explicit so no environment variable of
 * the SDK changes where requests go.
 */
export function createOpenAiClient(config: Pick<LlmProviderConfig, 'api_key' | 'base_url'>): OpenAI {
  return new OpenAI({ apiKey: config.api_key, baseURL: config.base_url || DEFAULT_OPENAI_BASE_URL, maxRetries: 0, fetch: vendorFetch });
}

/**
 * A streaming POST through the SDK's generic `post` (its documented call for any endpoint): the
 * SDK still sends it (auth, headers, errors; vendorFetch carries it), and the bytes on the wire
 * are the same as `chat.completions.create` / `responses.create` send. Those also watch their own JSON encoding of
 * the body to learn the `stream` flag (a replacer called per JSON value): about a third of the
 * encoding's cost, and the request of a long session is 300+ KB (issue 26: 6.5 -> 4.7 ms of CPU
 * a request at 313 KB). Our body sets `stream: true` itself, and the caller reads the raw Response.
 * The body comes encoded (encodeJsonBody: the history's messages are encoded once each, not on
 * every request); the SDK sends bytes verbatim, so the content type its JSON encoder would set is
 * set here.
 *
 * The body's parts go to the SDK as a stream with their length (decisions 0109, 0113): vendorFetch
 * hands undici the parts behind it, and any other `fetch` reads the stream's chunks as they are,
 * where a byte body would be copied twice (300 KB copies per request of a long session). The parts
 * are the body's head, the kept bytes of the history and its tail (encodeJsonBody), so the history
 * is not copied at all. The wire is the same: the same bytes, with `content-length`.
 */
export function postStreaming(
  client: OpenAI,
  path: '/chat/completions' | '/responses',
  body: readonly Uint8Array[],
  signal?: AbortSignal,
): Promise<Response> {
  return client.post(path, { body: partsBody(body), headers: jsonHeaders(body), stream: true, signal }).asResponse();
}

const jsonHeaders = (body: readonly Uint8Array[]) => ({
  'content-type': 'application/json',
  'content-length': String(body.reduce((n, part) => n + part.byteLength, 0)),
});

/** `GET /models`, all pages, without the non-chat families; the id doubles as display name. */
export async function listOpenAiModels(client: OpenAI): Promise<LlmModelInfo[]> {
  const models: LlmModelInfo[] = [];
  for await (const model of client.models.list()) {
    if (!NON_CHAT_MODEL.test(model.id)) models.push({ id: model.id, display_name: model.id });
  }
  return models;
}

/** A data: URL for an inline image part. */
export function imageDataUrl(part: Extract<LlmUserPart, { type: 'image' }>): string {
  return `data:${part.media_type};base64,${part.data_base64}`;
}

/** Tool output as OpenAI sees it: it has no error flag, so errors are marked in the text. */
export function toolOutputText(content: string, isError: boolean | undefined): string {
  return isError ? `Error: ${content}` : content;
}

/**
 * The items of a streaming response (Chat Completions chunks, Responses events) as the SDK's
 * stream yields them: `[DONE]` ends it, an `error` event or an item carrying `error` throws the
 * SDK's `APIError`, an item that is not JSON throws the SDK's SyntaxError.
 */
export function openAiStreamItems<T>(response: Response): AsyncGenerator<T> {
  return vendorSseItems(responseBody(response), isDone, (sse) => {
    if (isDone(sse)) return undefined;
    let data: { error?: object } | null;
    try {
      data = JSON.parse(sse.data);
    } catch {
      throw new SyntaxError('Error reading response: malformed server-sent event JSON.');
    }
    if (sse.event === 'error') throw new APIError(undefined, data?.error ?? data ?? undefined, undefined, response.headers);
    if (data?.error) throw new APIError(undefined, data.error, undefined, response.headers);
    return (data ?? undefined) as T | undefined;
  });
}

const isDone = (sse: EventSourceMessage) => sse.data === '[DONE]';
