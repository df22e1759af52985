/** What a user message is checked for before it starts a turn or waits in the queue (spec 4.2). */
import type { InputPart, MessageControlsInput } from '../../../schemas/turns.js';
import { EFFECTIVE_SESSION_CONFIG_SQL, SESSION_LAYERS_JOIN_SQL } from '../../db/index.js';
import { InvalidRequestError, NotFoundError } from '../../errors.js';
import { pickModelId } from '../../llm/index.js';
import type { MessageInput, MessagePart } from '../../turns/index.js';
import { createResponseFormatCheck } from './response-format.js';
import type { TurnApiContext, TurnPrincipal } from './turn-api-context.js';

/** The message as stored: parts normalised, tags unique, empty controls left out. */
export function messageInput(
  content: InputPart[],
  controls: MessageControlsInput,
  tags: readonly string[],
  metadata: Record<string, unknown> | undefined,
): MessageInput {
  const input: MessageInput = { content: content.map(normalizePart), created_at: new Date().toISOString() };
  if (Object.keys(controls).length) input.controls = { ...controls };
  if (tags.length) input.tags = [...new Set(tags)];
  if (metadata) input.metadata = metadata;
  return input;
}

export function createMessageChecks(ctx: TurnApiContext) {
  const { store, models, images, owned } = ctx;
  const checkResponseFormat = createResponseFormatCheck(ctx);

  async function checkImages(principal: TurnPrincipal, sessionId: string, content: InputPart[]): Promise<void> {
    for (const part of content) {
      if (part.type !== 'image_file') continue;
      const imageSession = await images.sessionOf(principal.org_id, part.image_id);
      if (!imageSession) throw new NotFoundError();
      // An image is its session's: a member may attach only images of sessions they may reach.
      if (imageSession !== sessionId) await owned(principal, imageSession);
    }
  }

  async function checkControls(orgId: string, sessionId: string, controls: MessageControlsInput): Promise<void> {
    if (controls.model_id) await models.resolve(orgId, controls.model_id);
    if (controls.max_tokens === undefined) return;
    // The model defaults the turn will use: the session's configuration snapshot (spec 3.4).
    const defaults = await store.sql<{ model_id: string | null; agent_model: string | null; harness_model: string | null }>(
      `select s.model_id, c.config #>> '{agent,default_model_id}' as agent_model, c.config #>> '{harness,default_model_id}' as harness_model
       from ${SESSION_LAYERS_JOIN_SQL}, lateral (select ${EFFECTIVE_SESSION_CONFIG_SQL} as config) c where s.id = ?`,
      [sessionId],
    );
    const d = defaults[0];
    const model = await models
      .resolve(orgId, pickModelId(controls.model_id, d?.model_id, d?.agent_model, d?.harness_model))
      .catch(() => null);
    if (model?.max_output_tokens !== undefined && controls.max_tokens > model.max_output_tokens) {
      throw new InvalidRequestError('Invalid request: controls.max_tokens exceeds the model maximum');
    }
  }

  return {
    /** 404 for an image the principal may not reach, 400 for controls the model refuses or a response format that does not compile. */
    async input(principal: TurnPrincipal, sessionId: string, content: InputPart[], controls: MessageControlsInput): Promise<void> {
      await checkImages(principal, sessionId, content);
      await checkControls(principal.org_id, sessionId, controls);
      await checkResponseFormat(principal, controls.response_format);
    },
  };
}

function normalizePart(part: InputPart): MessagePart {
  if (part.type === 'text') return { type: 'text', text: part.text };
  const out: MessagePart = { type: 'image_file', image_id: part.image_id };
  if (part.filename) out['filename'] = part.filename;
  return out;
}
