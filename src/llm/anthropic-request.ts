import type { Anthropic } from '@anthropic-ai/sdk';
import { decodeProviderState } from './provider-state.js';
import { REPLY_TOOL_NAME, replySchemaOf } from './structured-output.js';
import type { LlmMessage, LlmReasoningEffort, LlmRequest, LlmToolDefinition } from './types.js';

type MessageParam = Anthropic.MessageParam;
type Block = Exclude<MessageParam['content'], string>[number];
type MediaType = Anthropic.Base64ImageSource['media_type'];

/** Answer tokens when the request sets no max_tokens (the API requires a value). */
export const DEFAULT_ANTHROPIC_MAX_TOKENS = 8192;
/** Thinking budget per reasoning effort; added on top of max_tokens. */
export const ANTHROPIC_THINKING_BUDGET_TOKENS: Record<LlmReasoningEffort, number> = { low: 1024, medium: 4096, high: 16384 };

const EPHEMERAL = { type: 'ephemeral' } as const;

/** Thinking blocks of an earlier step, replayed verbatim (the API checks their signatures). */
export type AnthropicThinkingBlock =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string };

function thinkingBlocks(state: string | undefined): AnthropicThinkingBlock[] {
  const blocks = decodeProviderState('anthropic', state)?.['thinking_blocks'];
  return Array.isArray(blocks) ? (blocks as AnthropicThinkingBlock[]) : [];
}

function blocksOf(m: LlmMessage, withThinking: boolean): Block[] {
  if (m.role === 'user') {
    return m.content.flatMap((p): Block[] => {
      if (p.type === 'text') return p.text ? [{ type: 'text', text: p.text }] : [];
      return [{ type: 'image', source: { type: 'base64', media_type: p.media_type as MediaType, data: p.data_base64 } }];
    });
  }
  if (m.role === 'tool') {
    return [{ type: 'tool_result', tool_use_id: m.tool_call_id, content: m.content, ...(m.is_error ? { is_error: true } : {}) }];
  }
  return [
    ...(withThinking ? thinkingBlocks(m.provider_state) : []),
    ...(m.content ? [{ type: 'text' as const, text: m.content }] : []),
    ...(m.tool_calls ?? []).map((c) => ({ type: 'tool_use' as const, id: c.id, name: c.name, input: c.arguments })),
  ];
}

/**
 * Maps neutral messages to Messages API turns. Tool results travel as `tool_result` blocks
 * in a user turn; consecutive turns of the same role are merged (the API wants alternation),
 * which also puts all results of a parallel step into one user turn.
 */
export function toAnthropicMessages(messages: LlmMessage[], withThinking: boolean): MessageParam[] {
  const out: MessageParam[] = [];
  for (const m of messages) {
    const role = m.role === 'assistant' ? 'assistant' : 'user';
    const blocks = blocksOf(m, withThinking);
    if (!blocks.length) continue;
    const last = out.at(-1);
    if (last && last.role === role) (last.content as Block[]).push(...blocks);
    else out.push({ role, content: blocks });
  }
  return out;
}

/** Blocks that may carry `cache_control` (thinking blocks may not). */
const CACHEABLE = new Set(['text', 'image', 'tool_use', 'tool_result']);

/**
 * Marks the conversation's stable prefixes for the prompt cache (issue 26): the first message's
 * first block (after a compaction it leads with the summary, unchanged until the next one) and
 * the last message's last block (the next step and the next turn read the whole conversation
 * so far from the cache). With the system prompt and the tools that is the API's limit of four.
 */
function markCacheBreakpoints(messages: MessageParam[]): MessageParam[] {
  const mark = (m: MessageParam | undefined, pick: (blocks: Block[]) => Block | undefined) => {
    const block = m && Array.isArray(m.content) ? pick(m.content as Block[]) : undefined;
    if (block && CACHEABLE.has(block.type)) Object.assign(block, { cache_control: EPHEMERAL });
  };
  mark(messages[0], (b) => b[0]);
  mark(messages.at(-1), (b) => b.at(-1));
  return messages;
}

/**
 * The streaming request body for `POST /v1/messages`. Prompt caching: breakpoints on the
 * system prompt, on the last tool, and on the conversation (`markCacheBreakpoints`). With reasoning_effort, extended thinking gets a
 * budget on top of max_tokens, and temperature is dropped (the API requires the default).
 */
export function toAnthropicParams(req: LlmRequest): Anthropic.MessageCreateParamsStreaming {
  const { max_tokens, temperature, reasoning_effort, response_format } = req.controls;
  const budget = reasoning_effort ? ANTHROPIC_THINKING_BUDGET_TOKENS[reasoning_effort] : 0;
  const tools = response_format ? [...req.tools, replyTool(replySchemaOf(response_format))] : req.tools;
  const lastTool = tools.length - 1;
  return {
    model: req.model,
    max_tokens: (max_tokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS) + budget,
    stream: true,
    ...(req.system ? { system: [{ type: 'text' as const, text: req.system, cache_control: EPHEMERAL }] } : {}),
    messages: markCacheBreakpoints(toAnthropicMessages(req.messages, budget > 0)),
    ...(tools.length
      ? {
          tools: tools.map((t, i) => ({
            name: t.name,
            description: t.description,
            input_schema: t.parameters as Anthropic.Tool.InputSchema,
            ...(i === lastTool ? { cache_control: EPHEMERAL } : {}),
          })),
        }
      : {}),
    ...(response_format ? { tool_choice: replyToolChoice(req.tools.length, budget > 0) } : {}),
    ...(budget > 0 ? { thinking: { type: 'enabled' as const, budget_tokens: budget } } : {}),
    ...(temperature !== undefined && budget === 0 ? { temperature } : {}),
  };
}

/** Anthropic has no JSON mode: a structured reply is the input of a tool the model is made to call. */
function replyTool(schema: Record<string, unknown>): LlmToolDefinition {
  return { name: REPLY_TOOL_NAME, description: 'Send your final reply: its input is the reply.', parameters: schema };
}

/**
 * Forced: that tool alone (`tool`) or, with the agent's tools, some tool (`any`, so the model
 * can still act first). Extended thinking allows only `auto`: the repair step is the backstop.
 */
function replyToolChoice(agentTools: number, thinking: boolean): Anthropic.ToolChoice {
  if (thinking) return { type: 'auto' };
  return agentTools ? { type: 'any' } : { type: 'tool', name: REPLY_TOOL_NAME };
}
