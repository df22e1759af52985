/**
 * Aliases for clients of the earlier public API (docs/decisions/0044-earlier-api-aliases.md):
 * client tools declared as `tools`, and the default model named by
 * `model` (an id or a model name). Pure checks here; the lookups are the caller's.
 */
import type { ClientToolInput, ToolDeclarationInput } from '../../../schemas/agents.js';
import { ConflictError, InvalidRequestError, NotFoundError } from '../../errors.js';
import { isAnyUuid } from '../../ids.js';
import type { ModelLookup } from './types.js';

/** `tools` as client tools; 400 when both `tools` and `client_tools` are given (which one would win is a guess). */
export function clientToolsOf(input: { tools?: ToolDeclarationInput[]; client_tools?: ClientToolInput[] }): ClientToolInput[] | undefined {
  if (input.tools === undefined) return input.client_tools;
  if (input.client_tools !== undefined)
    throw new InvalidRequestError('Invalid request: give client tools as client_tools or as tools, not both');
  return input.tools.map((t) => ({ type: 'client', name: t.name, description: t.description, parameters: t.parameters }));
}

/**
 * The model id a `model` reference names in the organisation: a model id, or a model name
 * (`gpt-5`) that exactly one model carries. Unknown → 404 (as an unknown `default_model_id`),
 * a name several models carry → 409 naming the way out.
 */
export async function resolveModelReference(models: ModelLookup | undefined, orgId: string, reference: string): Promise<string> {
  if (isAnyUuid(reference)) {
    const id = reference.toLowerCase();
    if (models && !(await models.exists(orgId, id))) throw unknownModel();
    return id;
  }
  const ids = (await models?.idsByName?.(orgId, reference)) ?? [];
  if (ids.length === 0) throw unknownModel();
  if (ids.length > 1)
    throw new ConflictError(
      `Model name ${JSON.stringify(reference)} matches ${ids.length} models of this organization; give the model id instead`,
    );
  return ids[0]!;
}

/** `default_model_id` after `model`: both given and naming different models → 400. */
export function reconcileModel(resolved: string, defaultModelId: string | null | undefined): string {
  if (defaultModelId != null && defaultModelId.toLowerCase() !== resolved) {
    throw new InvalidRequestError('Invalid request: model and default_model_id name different models');
  }
  return resolved;
}

function unknownModel(): NotFoundError {
  return new NotFoundError('Not found: model is not a model of this organization');
}
