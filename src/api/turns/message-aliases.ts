/**
 * The earlier public API's spellings on POST /v1/sessions/{id}/messages
 * (docs/decisions/0044-earlier-api-aliases.md): `controls.modelId` beside `model_id`, and
 * `tags` / `metadata` next to `message` instead of inside it. Pure: the route applies them.
 */
import { MAX_MESSAGE_METADATA_BYTES, MAX_MESSAGE_TAGS, type MessageControlsInput } from '../../../schemas/turns.js';
import { InvalidRequestError, LimitExceededError } from '../../errors.js';

/** `modelId` folded into `model_id`; both given and different → 400. */
export function foldControls(controls: MessageControlsInput): MessageControlsInput {
  if (controls.modelId === undefined) return controls;
  const { modelId, ...rest } = controls;
  if (rest.model_id !== undefined && rest.model_id !== modelId)
    throw new InvalidRequestError('Invalid request: controls.model_id and controls.modelId name different models');
  return { ...rest, model_id: modelId };
}

/** The message's tags and the request's, without repeats; more than the limit → 400. */
export function mergeTags(inMessage: readonly string[] | undefined, beside: readonly string[] | null | undefined): string[] {
  const tags = [...new Set([...(inMessage ?? []), ...(beside ?? [])])];
  if (tags.length > MAX_MESSAGE_TAGS) throw new InvalidRequestError(`Invalid request: a message carries at most ${MAX_MESSAGE_TAGS} tags`);
  return tags;
}

/** The metadata to keep (null and `{}` keep nothing); over the size limit → 400. */
export function checkMetadata(metadata: Record<string, unknown> | null | undefined): Record<string, unknown> | undefined {
  if (!metadata || Object.keys(metadata).length === 0) return undefined;
  if (Buffer.byteLength(JSON.stringify(metadata), 'utf8') > MAX_MESSAGE_METADATA_BYTES) throw new LimitExceededError();
  return metadata;
}
