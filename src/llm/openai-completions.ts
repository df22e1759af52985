import { randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { OpenAI } from 'openai';
import { LlmError } from './errors.js';
import {
  createOpenAiClient,
  DEFAULT_OPENAI_BASE_URL,
  imageDataUrl,
  listOpenAiModels,
  openAiStreamItems,
  postStreaming,
  toolOutputText,
} from './openai-client.js';
import { encodedMessages, encodeJsonBody, jsonBytes } from './encoded-body.js';
import { callWithRetries, streamWithRetries, type LlmRetryOptions } from './retry.js';
import { toolCallEvent } from './tool-arguments.js';
import type { LlmMessage, LlmProvider, LlmProviderConfig, LlmRequest, LlmResponseFormat, LlmStopReason, LlmStreamEvent } from './types.js';

type ChatMessage = OpenAI.Chat.ChatCompletionMessageParam;
type Chunk = OpenAI.Chat.ChatCompletionChunk;
/** Reasoning text as OpenAI-compatible servers stream it (DeepSeek/vLLM, OpenRouter). */
type ReasoningDelta = { reasoning_content?: unknown; reasoning?: unknown };

/** One neutral message as a Chat Completions message. */
function chatMessage(m: LlmMessage): ChatMessage {
  if (m.role === 'user') {
    const content = m.content.map((p) =>
      p.type === 'text' ? ({ type: 'text', text: p.text } as const) : ({ type: 'image_url', image_url: { url: imageDataUrl(p) } } as const),
    );
    return { role: 'user', content };
  }
  if (m.role === 'assistant') {
    const calls = (m.tool_calls ?? []).map((c) => ({
      id: c.id,
      type: 'function' as const,
      function: { name: c.name, arguments: JSON.stringify(c.arguments) },
    }));
    return { role: 'assistant', content: m.content || null, ...(calls.length ? { tool_calls: calls } : {}) };
  }
  return { role: 'tool', tool_call_id: m.tool_call_id, content: toolOutputText(m.content, m.is_error) };
}

/** The encoded messages of a list, kept per message and list: a step encodes only what is new (see encodedMessages). */
const encodedChatMessages = encodedMessages((m) => jsonBytes(chatMessage(m)));

/**
 * The system message's bytes, kept by the prompt's text: every step and turn of an agent sends
 * the same prompt (a new string each turn), and a long one cost each step its encoding again.
 */
const systemMessages = new LRUCache<string, Uint8Array>({ maxSize: 4 * 1024 * 1024, sizeCalculation: (bytes) => bytes.length });

function systemMessageBytes(system: string): Uint8Array {
  let bytes = systemMessages.get(system);
  if (!bytes) {
    bytes = jsonBytes({ role: 'system', content: system });
    systemMessages.set(system, bytes);
  }
  return bytes;
}

/** Maps neutral messages to Chat Completions messages (system prompt first). */
export function toChatMessages(system: string, messages: readonly LlmMessage[]): ChatMessage[] {
  const mapped = messages.map(chatMessage);
  return system ? [{ role: 'system', content: system }, ...mapped] : mapped;
}

/**
 * The bytes of `JSON.stringify(toChatParams(req, officialEndpoint))` as parts (encodeJsonBody),
 * the history's messages sent as their kept, joined encodings (issue 26).
 */
export function chatBody(req: LlmRequest, officialEndpoint: boolean): readonly Uint8Array[] {
  const system = req.system ? systemMessageBytes(req.system) : undefined;
  return encodeJsonBody(chatParams(req, officialEndpoint, []), 'messages', encodedChatMessages(req.messages), system);
}

/**
 * The streaming request body for `POST /chat/completions`. OpenAI itself wants
 * `max_completion_tokens` (reasoning models reject `max_tokens`); compatible servers behind
 * a custom base URL mostly know only `max_tokens`, and some refuse fields they do not know, so
 * `prompt_cache_key` goes to OpenAI's own endpoint only.
 */
export function toChatParams(req: LlmRequest, officialEndpoint: boolean): OpenAI.Chat.ChatCompletionCreateParamsStreaming {
  return chatParams(req, officialEndpoint, toChatMessages(req.system, req.messages));
}

function chatParams(req: LlmRequest, officialEndpoint: boolean, messages: ChatMessage[]): OpenAI.Chat.ChatCompletionCreateParamsStreaming {
  const { max_tokens, temperature, reasoning_effort, response_format } = req.controls;
  return {
    model: req.model,
    messages,
    ...(response_format ? { response_format: chatResponseFormat(response_format) } : {}),
    stream: true,
    stream_options: { include_usage: true },
    ...(req.cache_key && officialEndpoint ? { prompt_cache_key: req.cache_key } : {}),
    ...(req.tools.length
      ? {
          tools: req.tools.map((t) => ({
            type: 'function' as const,
            function: { name: t.name, description: t.description, parameters: t.parameters },
          })),
          parallel_tool_calls: true,
        }
      : {}),
    ...(max_tokens !== undefined ? (officialEndpoint ? { max_completion_tokens: max_tokens } : { max_tokens }) : {}),
    ...(temperature !== undefined ? { temperature } : {}),
    ...(reasoning_effort ? { reasoning_effort } : {}),
  };
}

/** `response_format` of Chat Completions: its native structured output. */
function chatResponseFormat(f: LlmResponseFormat): OpenAI.Chat.ChatCompletionCreateParams['response_format'] {
  if (f.type === 'json_object') return { type: 'json_object' };
  const strict = f.strict !== undefined ? { strict: f.strict } : {};
  return { type: 'json_schema', json_schema: { name: f.name, schema: f.schema, ...strict } };
}

function stopReasonOf(finish: string, toolCalls: number): LlmStopReason {
  if (toolCalls > 0 || finish === 'tool_calls' || finish === 'function_call') return 'tool_use';
  if (finish === 'stop') return 'end_turn';
  if (finish === 'length') return 'max_tokens';
  if (finish === 'content_filter') return 'content_filter';
  return 'other';
}

/** Translates chunks into neutral events; tool-call fragments are joined by `index`. */
export async function* mapChatStream(chunks: AsyncIterable<Chunk>): AsyncGenerator<LlmStreamEvent> {
  const calls = new Map<number, { id: string; name: string; args: string }>();
  let finish: string | undefined;
  let usage: Chunk['usage'] | undefined;
  let flushed = 0;
  for await (const chunk of chunks) {
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    const delta = (choice.delta ?? {}) as Chunk['choices'][number]['delta'] & ReasoningDelta;
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (typeof reasoning === 'string' && reasoning) yield { type: 'thinking_delta', text: reasoning };
    if (delta.content) yield { type: 'text_delta', text: delta.content };
    for (const frag of delta.tool_calls ?? []) {
      const call = calls.get(frag.index) ?? { id: '', name: '', args: '' };
      if (frag.id) call.id = frag.id;
      if (frag.function?.name) call.name += frag.function.name;
      if (frag.function?.arguments) call.args += frag.function.arguments;
      calls.set(frag.index, call);
    }
    if (choice.finish_reason) finish = choice.finish_reason;
    if (finish && flushed < calls.size) {
      for (const [index, call] of [...calls.entries()].sort((a, b) => a[0] - b[0]).slice(flushed)) {
        yield toolCallEvent(call.id || `call_${index}_${randomUUID()}`, call.name, call.args);
      }
      flushed = calls.size;
    }
  }
  if (!finish) throw new LlmError('network', { vendorCode: 'stream_truncated' });
  yield {
    type: 'usage',
    input_tokens: usage?.prompt_tokens ?? 0,
    output_tokens: usage?.completion_tokens ?? 0,
    cache_read_tokens: usage?.prompt_tokens_details?.cached_tokens ?? 0,
  };
  yield { type: 'done', stop_reason: stopReasonOf(finish, calls.size) };
}

/** Provider type `openai_completions`: Chat Completions, OpenAI or any compatible server. */
export function createOpenAiCompletionsProvider(config: LlmProviderConfig, retry: LlmRetryOptions): LlmProvider {
  const client = createOpenAiClient(config);
  const official = !config.base_url || config.base_url.replace(/\/+$/, '') === DEFAULT_OPENAI_BASE_URL;
  return {
    type: 'openai_completions',
    stream(req) {
      const open = async function* () {
        const response = await postStreaming(client, '/chat/completions', chatBody(req, official), req.signal);
        yield* mapChatStream(openAiStreamItems<Chunk>(response));
      };
      return streamWithRetries(open, req.signal, retry);
    },
    listModels: () => callWithRetries(() => listOpenAiModels(client), undefined, retry),
  };
}
