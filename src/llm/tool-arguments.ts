import type { LlmStreamEvent } from './types.js';

type ToolCallEvent = Extract<LlmStreamEvent, { type: 'tool_call' }>;

/**
 * Builds a `tool_call` event from the model's argument text. Text that is not a JSON
 * object yields `arguments: {}` plus `invalid_arguments` (the raw text), so the turn engine
 * can answer the call with an error result instead of running the tool on garbage.
 */
export function toolCallEvent(id: string, name: string, rawArguments: string): ToolCallEvent {
  const raw = rawArguments.trim() === '' ? '{}' : rawArguments;
  try {
    const parsed: unknown = JSON.parse(raw);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
      return { type: 'tool_call', id, name, arguments: parsed as Record<string, unknown> };
    }
  } catch {
    // fall through: reported as invalid_arguments
  }
  return { type: 'tool_call', id, name, arguments: {}, invalid_arguments: rawArguments };
}
