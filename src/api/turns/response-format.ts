/**
 * `controls.response_format` when a message is accepted (docs/decisions/0098-structured-replies.md):
 * a schema larger than the operator's cap, one that does not compile, or one that takes the
 * parse pool past its deadline is a 400 naming the field; compiling runs off the event loop.
 */
import type { ResponseFormatInput } from '../../../schemas/turns.js';
import { InvalidRequestError } from '../../errors.js';
import { createReplySchemaChecks, ParseLimitError } from '../../offthread/index.js';
import type { TurnApiContext, TurnPrincipal } from './turn-api-context.js';

export const DEFAULT_MAX_RESPONSE_SCHEMA_BYTES = 64 * 1024;
const FIELD = 'controls.response_format.json_schema.schema';

export function createResponseFormatCheck(ctx: TurnApiContext) {
  const checks = ctx.replySchemas ?? createReplySchemaChecks();
  const maxBytes = ctx.maxResponseSchemaBytes ?? DEFAULT_MAX_RESPONSE_SCHEMA_BYTES;

  return async function checkResponseFormat(principal: TurnPrincipal, format: ResponseFormatInput | undefined): Promise<void> {
    if (format?.type !== 'json_schema') return;
    const { schema } = format.json_schema;
    const bytes = Buffer.byteLength(JSON.stringify(schema));
    if (bytes > maxBytes) throw new InvalidRequestError(`Invalid request: ${FIELD} is ${bytes} bytes of JSON; at most ${maxBytes}`);
    let problem: string | null;
    try {
      problem = await checks.problem(schema, { org: principal.org_id, key: principal.user_id ?? '' });
    } catch (err) {
      if (err instanceof ParseLimitError)
        throw new InvalidRequestError(`Invalid request: ${FIELD} is too complex to compile (${err.message})`);
      throw err;
    }
    if (problem) throw new InvalidRequestError(`Invalid request: ${FIELD} is not a valid JSON Schema: ${problem}`);
  };
}
