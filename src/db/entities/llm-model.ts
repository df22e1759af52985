import { defineEntity, p } from '@mikro-orm/core';
import { newId } from '../../ids.js';

export type LlmModelSourceValue = 'manual' | 'discovered';
export type LlmModelStatusValue = 'active' | 'stale';

/**
 * A model of an LLM provider. `model_id` is the vendor's name sent on the wire; `id` is what
 * agents, harnesses, sessions and the organisation default refer to. Rows go away with their
 * provider (foreign key, on delete cascade); the organisation column is a copy of the
 * provider's, so reads can be org-scoped without a join.
 */
export const LlmModelEntity = defineEntity({
  name: 'LlmModel',
  tableName: 'llm_models',
  properties: {
    id: p
      .uuid()
      .primary()
      .onCreate(() => newId()),
    organization_id: p.uuid().index(),
    provider_id: p.uuid().index(),
    model_id: p.text(),
    display_name: p.text(),
    capabilities: p.json<string[]>(),
    enabled: p.boolean(),
    /** Tokens the model accepts per request (null: the family default, src/llm/model-limits.ts). */
    context_window: p.integer().nullable(),
    /** Most tokens the model generates per call (null: the family default). */
    max_output_tokens: p.integer().nullable(),
    source: p.string().$type<LlmModelSourceValue>(),
    status: p.string().$type<LlmModelStatusValue>(),
    created_at: p.datetime().onCreate(() => new Date()),
    updated_at: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});
