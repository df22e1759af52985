/**
 * The check of a structured reply at the end of its reason step (docs/decisions/0098-structured-replies.md):
 * the final reply's text against the turn's response format, on the parse pool (a tenant's
 * schema may be costly to compile or to run). The outcome rides in the step's
 * `output.message.completed` (`parsed`, or `structured_output_errors`), from which the decider
 * completes the turn, asks for one repair, or fails it.
 */
import type { LlmResponseFormat } from '../../../src/llm/index.js';
import { ParseLimitError, type ReplySchemaChecks } from '../../../src/offthread/index.js';
import type { StructuredReply } from '../../../src/turns/index.js';

/** Checks a final reply's text; absent when the turn asks for no format. */
export type ReplyChecker = (text: string) => Promise<StructuredReply>;

export function replyChecker(
  checks: ReplySchemaChecks,
  format: LlmResponseFormat | undefined,
  tenant: { orgId: string; sessionId: string },
): ReplyChecker | undefined {
  if (!format) return undefined;
  const schema = format.type === 'json_schema' ? format.schema : { type: 'object' };
  return async (text) => {
    try {
      return await checks.check(schema, text, { org: tenant.orgId, key: tenant.sessionId });
    } catch (err) {
      // A schema that compiled when the message came can still be slow on a reply: that reply fails its check.
      if (err instanceof ParseLimitError) return { errors: [`the reply could not be checked (${err.message})`] };
      throw err;
    }
  };
}
