import { Anthropic, APIError } from '@anthropic-ai/sdk';
import { type AnthropicThinkingBlock, toAnthropicParams } from './anthropic-request.js';
import { LlmError } from './errors.js';
import { listedLimits } from './model-limits.js';
import { encodeProviderState } from './provider-state.js';
import { callWithRetries, streamWithRetries, type LlmRetryOptions } from './retry.js';
import { toolCallEvent } from './tool-arguments.js';
import { replyToolAsText } from './structured-output.js';
import type { LlmModelInfo, LlmProvider, LlmProviderConfig, LlmStopReason, LlmStreamEvent } from './types.js';
import { responseBody, vendorFetch } from './vendor-fetch.js';
import { vendorSseItems } from './vendor-sse.js';

export const DEFAULT_ANTHROPIC_BASE_URL = 'https://api.anthropic.com';

type StreamEvent = Anthropic.RawMessageStreamEvent;
type OpenBlock =
  | { kind: 'tool'; id: string; name: string; json: string }
  | { kind: 'thinking'; thinking: string; signature: string }
  | { kind: 'other' };

const STOP_REASONS: Record<string, LlmStopReason> = {
  end_turn: 'end_turn',
  stop_sequence: 'end_turn',
  tool_use: 'tool_use',
  max_tokens: 'max_tokens',
  model_context_window_exceeded: 'max_tokens',
  refusal: 'content_filter',
};

interface UsageCounters {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

function mergeUsage(into: Required<{ [K in keyof UsageCounters]: number }>, from: UsageCounters): void {
  for (const key of Object.keys(into) as (keyof UsageCounters)[]) {
    const v = from[key];
    if (typeof v === 'number') into[key] = v;
  }
}

function openBlock(
  block: Extract<StreamEvent, { type: 'content_block_start' }>['content_block'],
  thinking: AnthropicThinkingBlock[],
): OpenBlock {
  if (block.type === 'tool_use') return { kind: 'tool', id: block.id, name: block.name, json: '' };
  if (block.type === 'thinking') return { kind: 'thinking', thinking: '', signature: block.signature ?? '' };
  if (block.type === 'redacted_thinking') thinking.push({ type: 'redacted_thinking', data: block.data });
  return { kind: 'other' };
}

/**
 * The events of a streaming Messages response, as the SDK's stream yields them: `ping` and
 * unnamed events skipped, an `error` event throws the SDK's `APIError`, `message_stop` is the last.
 */
export function anthropicEvents(response: Response): AsyncGenerator<StreamEvent> {
  return vendorSseItems(
    responseBody(response),
    (sse) => sse.event === 'message_stop',
    (sse) => {
      if (sse.event === 'ping' || !sse.event || !sse.data) return undefined;
      if (sse.event === 'error') {
        const body = parseJsonOrUndefined(sse.data) ?? sse.data;
        const type = (body as { error?: { type?: Anthropic.ErrorType } } | undefined)?.error?.type;
        throw new APIError(undefined, body, undefined, response.headers, type);
      }
      return JSON.parse(sse.data) as StreamEvent;
    },
  );
}

function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Translates Messages API stream events into neutral events. Thinking blocks (with their
 * signatures) are returned in `done.provider_state` so the next step can replay them.
 */
export async function* mapAnthropicStream(events: AsyncIterable<StreamEvent>): AsyncGenerator<LlmStreamEvent> {
  const blocks = new Map<number, OpenBlock>();
  const thinking: AnthropicThinkingBlock[] = [];
  const usage = { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
  let stop: string | null | undefined;
  let stopped = false;
  let toolCalls = 0;
  for await (const ev of events) {
    if (ev.type === 'message_start') mergeUsage(usage, ev.message.usage);
    else if (ev.type === 'content_block_start') blocks.set(ev.index, openBlock(ev.content_block, thinking));
    else if (ev.type === 'content_block_delta') {
      const block = blocks.get(ev.index);
      const d = ev.delta;
      if (d.type === 'text_delta' && d.text) yield { type: 'text_delta', text: d.text };
      else if (d.type === 'thinking_delta' && block?.kind === 'thinking') {
        block.thinking += d.thinking;
        if (d.thinking) yield { type: 'thinking_delta', text: d.thinking };
      } else if (d.type === 'signature_delta' && block?.kind === 'thinking') block.signature += d.signature;
      else if (d.type === 'input_json_delta' && block?.kind === 'tool') block.json += d.partial_json;
    } else if (ev.type === 'content_block_stop') {
      const block = blocks.get(ev.index);
      if (block?.kind === 'tool') {
        toolCalls++;
        yield toolCallEvent(block.id, block.name, block.json);
      } else if (block?.kind === 'thinking') thinking.push({ type: 'thinking', thinking: block.thinking, signature: block.signature });
      blocks.delete(ev.index);
    } else if (ev.type === 'message_delta') {
      stop = ev.delta.stop_reason ?? stop;
      mergeUsage(usage, ev.usage);
    } else if (ev.type === 'message_stop') stopped = true;
  }
  if (!stopped) throw new LlmError('network', { vendorCode: 'stream_truncated' });
  yield {
    type: 'usage',
    input_tokens: usage.input_tokens + usage.cache_read_input_tokens + usage.cache_creation_input_tokens,
    output_tokens: usage.output_tokens,
    cache_read_tokens: usage.cache_read_input_tokens,
  };
  const stop_reason: LlmStopReason = toolCalls > 0 ? 'tool_use' : (STOP_REASONS[stop ?? ''] ?? 'other');
  const provider_state = thinking.length ? encodeProviderState('anthropic', { thinking_blocks: thinking }) : undefined;
  yield { type: 'done', stop_reason, ...(provider_state ? { provider_state } : {}) };
}

async function listAnthropicModels(client: Anthropic): Promise<LlmModelInfo[]> {
  const models: LlmModelInfo[] = [];
  for await (const m of client.models.list()) {
    // Newer listings state the limits; the SDK's type may not name them yet.
    const limits = m as { max_input_tokens?: unknown; max_tokens?: unknown };
    models.push({ id: m.id, display_name: m.display_name || m.id, ...listedLimits(limits.max_input_tokens, limits.max_tokens) });
  }
  return models;
}

/** Provider type `anthropic`: the Anthropic Messages API. */
export function createAnthropicProvider(config: LlmProviderConfig, retry: LlmRetryOptions): LlmProvider {
  const client = new Anthropic({
    apiKey: config.api_key,
    authToken: null,
    baseURL: config.base_url || DEFAULT_ANTHROPIC_BASE_URL,
    maxRetries: 0,
    fetch: vendorFetch,
  });
  return {
    type: 'anthropic',
    stream(req) {
      const open = async function* () {
        const response = await client.messages.create(toAnthropicParams(req), { signal: req.signal }).asResponse();
        const events = mapAnthropicStream(anthropicEvents(response));
        yield* req.controls.response_format ? replyToolAsText(events) : events;
      };
      return streamWithRetries(open, req.signal, retry);
    },
    listModels: () => callWithRetries(() => listAnthropicModels(client), undefined, retry),
  };
}
