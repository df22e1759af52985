/**
 * Structured replies in the turn's pure core (docs/decisions/0098-structured-replies.md): the
 * response format a turn's controls ask for, and what follows a final reply that did not
 * validate: one repair step (the transcript adds a note with the errors), then `turn.failed`
 * with `invalid_structured_output`.
 */
import type { LlmResponseFormat } from '../llm/index.js';
import type { TurnState } from './turn-state.js';

/** Repair steps after a reply that did not validate; then the turn fails. */
export const MAX_STRUCTURED_REPAIRS = 1;

/** The errors `turn.failed` names, of those the last reply had. */
const ERRORS_SHOWN = 3;

/** The turn's response format, from its stored controls (validated when the message was accepted). */
export function responseFormatOf(controls: Readonly<Record<string, unknown>>): LlmResponseFormat | undefined {
  const f = controls['response_format'] as Record<string, unknown> | undefined;
  if (f?.['type'] === 'json_object') return { type: 'json_object' };
  if (f?.['type'] !== 'json_schema') return undefined;
  const spec = f['json_schema'] as Record<string, unknown>;
  const strict = typeof spec['strict'] === 'boolean' ? { strict: spec['strict'] } : {};
  const name = typeof spec['name'] === 'string' ? spec['name'] : 'reply';
  return { type: 'json_schema', name, schema: spec['schema'] as Record<string, unknown>, ...strict };
}

export type InvalidReplyOutcome = { kind: 'repair' } | { kind: 'fail'; error: string };

/** After a final reply: null when it is fine (or no format was asked for), else repair or fail. */
export function invalidReplyOutcome(s: TurnState, maxIterations: number): InvalidReplyOutcome | null {
  const errors = s.steps.at(-1)?.structuredErrors;
  if (!errors) return null;
  const invalid = s.steps.filter((step) => step.structuredErrors).length;
  if (invalid <= MAX_STRUCTURED_REPAIRS && s.steps.length < maxIterations) return { kind: 'repair' };
  const shown = errors.slice(0, ERRORS_SHOWN).join('; ');
  return { kind: 'fail', error: `The reply did not match the response format after ${invalid - 1} repair attempt(s): ${shown}` };
}
