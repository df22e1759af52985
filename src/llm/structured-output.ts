/**
 * What every adapter shares for structured replies (`controls.response_format`,
 * docs/decisions/0098-structured-replies.md): the synthetic tool of vendors without a JSON
 * mode (Anthropic: tool forcing), the mapping of that tool's call back to reply text, and the
 * wording of the repair note the turn sends after a reply that did not validate.
 */
import type { LlmResponseFormat, LlmStreamEvent } from './types.js';

/** The synthetic tool whose arguments are the reply, where the vendor forces a tool instead of a JSON mode. */
export const REPLY_TOOL_NAME = 'structured_reply';

/** How the repair note begins; llmsim knows a repair step by it (docs/llmsim.md). */
export const STRUCTURED_REPAIR_PREFIX = 'Your previous reply did not match the required response format.';

/** The user message of the repair step: what was wrong, and what to send instead. */
export function repairNoteText(errors: readonly string[]): string {
  return `${STRUCTURED_REPAIR_PREFIX} Problems: ${errors.join('; ')}. Reply again with only the JSON value, nothing else.`;
}

/** The JSON Schema a reply must match: the format's own, or any object for `json_object`. */
export function replySchemaOf(format: LlmResponseFormat): Record<string, unknown> {
  return format.type === 'json_schema' ? format.schema : { type: 'object' };
}

/**
 * A stream in which calls of the reply tool are the reply: their arguments become the step's
 * text (the JSON the model produced, as sent when it was not an object), and a step whose only
 * calls were that tool ends the turn like a text reply.
 */
export async function* replyToolAsText(events: AsyncIterable<LlmStreamEvent>): AsyncGenerator<LlmStreamEvent> {
  let otherCalls = 0;
  for await (const ev of events) {
    if (ev.type === 'tool_call' && ev.name === REPLY_TOOL_NAME) {
      yield { type: 'text_delta', text: ev.invalid_arguments ?? JSON.stringify(ev.arguments) };
    } else if (ev.type === 'done' && ev.stop_reason === 'tool_use' && otherCalls === 0) {
      yield { ...ev, stop_reason: 'end_turn' };
    } else {
      if (ev.type === 'tool_call') otherCalls++;
      yield ev;
    }
  }
}
