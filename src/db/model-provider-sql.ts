import type { InferEntity } from '@mikro-orm/core';
import type { LlmProviderEntity } from './entities/index.js';

/** What a model resolve builds its client from: the provider's columns and the model's ids. */
export type ModelProviderRow = Pick<
  InferEntity<typeof LlmProviderEntity>,
  'id' | 'organization_id' | 'provider_type' | 'base_url' | 'api_key_encrypted'
> & {
  /** llm_models.id */
  model_row_id: string;
  /** The vendor's model name. */
  model_id: string;
  /** The record's own limits (null: not stated; src/llm/model-limits.ts fills the family's). */
  context_window: number | null;
  max_output_tokens: number | null;
};

/**
 * The model `idSql` of organisation `orgSql` with its provider, in one indexed join (SQL
 * expressions in, one `ModelProviderRow` or none out). The model resolver runs it alone; the
 * turn setup read joins it in, so a turn resolves its model without a statement of its own.
 * Either way the provider row is read at the start of the attempt, so a changed key or URL is
 * seen at once on every instance.
 */
export const modelProviderSql = (idSql: string, orgSql: string) =>
  `select m.id as model_row_id, m.model_id, m.context_window, m.max_output_tokens, p.id, p.organization_id, p.provider_type, p.base_url, p.api_key_encrypted
   from llm_models m join llm_providers p on p.id = m.provider_id and p.organization_id = m.organization_id
   where m.id = ${idSql} and m.organization_id = ${orgSql}`;
