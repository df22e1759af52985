import { randomUUID } from 'node:crypto';
import { GoogleGenAI, type GenerateContentResponse, type GenerateContentResponseUsageMetadata } from '@google/genai';
import { LlmError, toLlmError } from './errors.js';
import { listedLimits } from './model-limits.js';
import { GEMINI_SYNTHETIC_ID_PREFIX, GEMINI_TEXT_SIGNATURE_KEY, toGeminiConfig, toGeminiContents } from './gemini-request.js';
import { encodeProviderState } from './provider-state.js';
import { callWithRetries, streamWithRetries, type LlmRetryOptions } from './retry.js';
import type { LlmModelInfo, LlmProvider, LlmProviderConfig, LlmStopReason, LlmStreamEvent } from './types.js';

export const DEFAULT_GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com/';
export const GEMINI_API_VERSION = 'v1beta';

const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT']);

function stopReasonOf(finish: string, toolCalls: number): LlmStopReason {
  if (toolCalls > 0) return 'tool_use';
  if (finish === 'STOP') return 'end_turn';
  if (finish === 'MAX_TOKENS') return 'max_tokens';
  return FILTERED.has(finish) ? 'content_filter' : 'other';
}

/**
 * Translates `streamGenerateContent?alt=sse` chunks into neutral events. Function calls
 * arrive whole; ids are invented when Gemini sends none. Thought signatures are returned
 * in `done.provider_state`, keyed by call id (or `_text`).
 */
export async function* mapGeminiStream(chunks: AsyncIterable<GenerateContentResponse>): AsyncGenerator<LlmStreamEvent> {
  const signatures: Record<string, string> = {};
  let usage: GenerateContentResponseUsageMetadata | undefined;
  let finish: string | undefined;
  let toolCalls = 0;
  for await (const chunk of chunks) {
    if (chunk.usageMetadata) usage = chunk.usageMetadata;
    if (chunk.promptFeedback?.blockReason) finish = 'SAFETY';
    const candidate = chunk.candidates?.[0];
    for (const part of candidate?.content?.parts ?? []) {
      if (part.functionCall) {
        const id = part.functionCall.id || `${GEMINI_SYNTHETIC_ID_PREFIX}${randomUUID()}`;
        if (part.thoughtSignature) signatures[id] = part.thoughtSignature;
        toolCalls++;
        yield { type: 'tool_call', id, name: part.functionCall.name ?? '', arguments: part.functionCall.args ?? {} };
        continue;
      }
      if (part.text) yield { type: part.thought ? 'thinking_delta' : 'text_delta', text: part.text };
      if (part.thoughtSignature && !part.thought) signatures[GEMINI_TEXT_SIGNATURE_KEY] = part.thoughtSignature;
    }
    if (candidate?.finishReason) finish = candidate.finishReason;
  }
  if (!finish) throw new LlmError('network', { vendorCode: 'stream_truncated' });
  yield {
    type: 'usage',
    input_tokens: usage?.promptTokenCount ?? 0,
    output_tokens: (usage?.candidatesTokenCount ?? 0) + (usage?.thoughtsTokenCount ?? 0),
    cache_read_tokens: usage?.cachedContentTokenCount ?? 0,
  };
  const provider_state = Object.keys(signatures).length ? encodeProviderState('gemini', { signatures }) : undefined;
  yield { type: 'done', stop_reason: stopReasonOf(finish, toolCalls), ...(provider_state ? { provider_state } : {}) };
}

/** Gemini puts its delay hint in the error body (RetryInfo `retryDelay: "12s"`). */
function retryDelayMs(err: unknown): number | undefined {
  const match = /"retryDelay"\s*:\s*"(\d+(?:\.\d+)?)s"/.exec(String((err as { message?: unknown })?.message ?? ''));
  return match ? Number(match[1]) * 1000 : undefined;
}

function rethrowClassified(err: unknown): never {
  throw toLlmError(err, { retryAfterMs: retryDelayMs(err) });
}

async function listGeminiModels(client: GoogleGenAI): Promise<LlmModelInfo[]> {
  const models: LlmModelInfo[] = [];
  const pager = await client.models.list({ config: { pageSize: 100 } });
  for await (const m of pager) {
    if (!m.name || (m.supportedActions && !m.supportedActions.includes('generateContent'))) continue;
    const id = m.name.replace(/^models\//, '');
    models.push({ id, display_name: m.displayName || id, ...listedLimits(m.inputTokenLimit, m.outputTokenLimit) });
  }
  return models;
}

/** Provider type `gemini`: the Gemini API through @google/genai (never Vertex AI). */
export function createGeminiProvider(config: LlmProviderConfig, retry: LlmRetryOptions): LlmProvider {
  const client = new GoogleGenAI({
    apiKey: config.api_key,
    vertexai: false,
    apiVersion: GEMINI_API_VERSION,
    httpOptions: { baseUrl: config.base_url || DEFAULT_GEMINI_BASE_URL },
  });
  return {
    type: 'gemini',
    stream(req) {
      const open = async function* () {
        try {
          const contents = toGeminiContents(req.messages);
          const stream = await client.models.generateContentStream({ model: req.model, contents, config: toGeminiConfig(req) });
          yield* mapGeminiStream(stream);
        } catch (err) {
          rethrowClassified(err);
        }
      };
      return streamWithRetries(open, req.signal, retry);
    },
    listModels: () => callWithRetries(() => listGeminiModels(client).catch(rethrowClassified), undefined, retry),
  };
}
