import type { OpenAI } from 'openai';
import { LlmError, toLlmError } from './errors.js';
import { createOpenAiClient, imageDataUrl, listOpenAiModels, openAiStreamItems, postStreaming, toolOutputText } from './openai-client.js';
import { encodedMessages, encodeJsonBody, jsonItemsBytes } from './encoded-body.js';
import { callWithRetries, streamWithRetries, type LlmRetryOptions } from './retry.js';
import { toolCallEvent } from './tool-arguments.js';
import type {
  LlmMessage,
  LlmProvider,
  LlmProviderConfig,
  LlmRequest,
  LlmResponseFormat,
  LlmStopReason,
  LlmStreamEvent,
  LlmUsage,
} from './types.js';

type InputItem = OpenAI.Responses.ResponseInputItem;
type StreamEvent = OpenAI.Responses.ResponseStreamEvent;
type ResponseBody = OpenAI.Responses.Response;

/** One neutral message as Responses API input items. */
function inputItems(m: LlmMessage): InputItem[] {
  if (m.role === 'user') {
    const content = m.content.map((p) =>
      p.type === 'text'
        ? ({ type: 'input_text', text: p.text } as const)
        : ({ type: 'input_image', image_url: imageDataUrl(p), detail: 'auto' } as const),
    );
    return [{ role: 'user', content }];
  }
  if (m.role === 'assistant') {
    const items: InputItem[] = m.content ? [{ role: 'assistant', content: m.content }] : [];
    for (const call of m.tool_calls ?? []) {
      items.push({ type: 'function_call', call_id: call.id, name: call.name, arguments: JSON.stringify(call.arguments) });
    }
    return items;
  }
  return [{ type: 'function_call_output', call_id: m.tool_call_id, output: toolOutputText(m.content, m.is_error) }];
}

/**
 * The encoded input items of a list's messages (a message's items joined by commas, empty for
 * none), kept per message and list: a step encodes only what is new (see encodedMessages).
 */
const encodedInputs = encodedMessages((m) => jsonItemsBytes(inputItems(m)));

/** Maps neutral messages to Responses API input items (stateless: `store: false`). */
export function toResponsesInput(messages: readonly LlmMessage[]): InputItem[] {
  return messages.flatMap(inputItems);
}

/** The bytes of `JSON.stringify(toResponsesParams(req))` as parts, the history's items sent as their kept, joined encodings (issue 26). */
export function responsesBody(req: LlmRequest): readonly Uint8Array[] {
  return encodeJsonBody(responsesParams(req, []), 'input', encodedInputs(req.messages));
}

/**
 * The streaming request body for `POST /responses`. With reasoning_effort the temperature
 * is dropped: OpenAI's reasoning models reject it.
 */
export function toResponsesParams(req: LlmRequest): OpenAI.Responses.ResponseCreateParamsStreaming {
  return responsesParams(req, toResponsesInput(req.messages));
}

function responsesParams(req: LlmRequest, input: InputItem[]): OpenAI.Responses.ResponseCreateParamsStreaming {
  const { max_tokens, temperature, reasoning_effort, response_format } = req.controls;
  return {
    model: req.model,
    ...(req.system ? { instructions: req.system } : {}),
    ...(response_format ? { text: { format: responsesTextFormat(response_format) } } : {}),
    input,
    stream: true,
    store: false,
    ...(req.cache_key ? { prompt_cache_key: req.cache_key } : {}),
    ...(req.tools.length
      ? {
          tools: req.tools.map((t) => ({
            type: 'function' as const,
            name: t.name,
            description: t.description,
            parameters: t.parameters,
            strict: false,
          })),
          parallel_tool_calls: true,
        }
      : {}),
    ...(max_tokens !== undefined ? { max_output_tokens: max_tokens } : {}),
    ...(temperature !== undefined && !reasoning_effort ? { temperature } : {}),
    ...(reasoning_effort ? { reasoning: { effort: reasoning_effort, summary: 'auto' as const } } : {}),
  };
}

/** `text.format` of the Responses API: its native structured output. */
function responsesTextFormat(f: LlmResponseFormat): OpenAI.Responses.ResponseFormatTextConfig {
  if (f.type === 'json_object') return { type: 'json_object' };
  return { type: 'json_schema', name: f.name, schema: f.schema, ...(f.strict !== undefined ? { strict: f.strict } : {}) };
}

function usageOf(response: ResponseBody): LlmUsage {
  return {
    input_tokens: response.usage?.input_tokens ?? 0,
    output_tokens: response.usage?.output_tokens ?? 0,
    cache_read_tokens: response.usage?.input_tokens_details?.cached_tokens ?? 0,
  };
}

function stopReasonOf(response: ResponseBody, toolCalls: number): LlmStopReason {
  if (toolCalls > 0) return 'tool_use';
  if (response.status === 'completed') return 'end_turn';
  const reason = response.incomplete_details?.reason;
  if (reason === 'max_output_tokens') return 'max_tokens';
  if (reason === 'content_filter') return 'content_filter';
  return 'other';
}

/** Translates the Responses SSE event stream into neutral events. */
export async function* mapResponsesStream(events: AsyncIterable<StreamEvent>): AsyncGenerator<LlmStreamEvent> {
  const argText = new Map<string, string>();
  let toolCalls = 0;
  let final: ResponseBody | undefined;
  for await (const ev of events) {
    switch (ev.type) {
      case 'response.output_text.delta':
        if (ev.delta) yield { type: 'text_delta', text: ev.delta };
        break;
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        if (ev.delta) yield { type: 'thinking_delta', text: ev.delta };
        break;
      case 'response.reasoning_summary_part.added':
        if (ev.summary_index > 0) yield { type: 'thinking_delta', text: '\n\n' };
        break;
      case 'response.function_call_arguments.delta':
        argText.set(ev.item_id, (argText.get(ev.item_id) ?? '') + ev.delta);
        break;
      case 'response.output_item.done':
        if (ev.item.type === 'function_call') {
          const item = ev.item;
          toolCalls++;
          yield toolCallEvent(item.call_id, item.name, item.arguments || argText.get(item.id ?? '') || '');
        }
        break;
      case 'response.completed':
      case 'response.incomplete':
        final = ev.response;
        break;
      case 'response.failed':
        throw toLlmError({ code: ev.response.error?.code });
      default:
        break;
    }
  }
  if (!final) throw new LlmError('network', { vendorCode: 'stream_truncated' });
  yield { type: 'usage', ...usageOf(final) };
  yield { type: 'done', stop_reason: stopReasonOf(final, toolCalls) };
}

/** Provider type `openai`: the OpenAI Responses API. */
export function createOpenAiResponsesProvider(config: LlmProviderConfig, retry: LlmRetryOptions): LlmProvider {
  const client = createOpenAiClient(config);
  return {
    type: 'openai',
    stream(req) {
      const open = async function* () {
        const response = await postStreaming(client, '/responses', responsesBody(req), req.signal);
        yield* mapResponsesStream(openAiStreamItems<StreamEvent>(response));
      };
      return streamWithRetries(open, req.signal, retry);
    },
    listModels: () => callWithRetries(() => listOpenAiModels(client), undefined, retry),
  };
}
