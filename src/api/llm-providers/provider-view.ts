import type { InferEntity } from '@mikro-orm/core';
import type { LlmProviderView } from '../../../schemas/llm.js';
import type { LlmProviderEntity } from '../../db/index.js';

/** A loaded provider row (holds the sealed key; never serialise it as is). */
export type LlmProviderRow = InferEntity<typeof LlmProviderEntity>;

/** The API shape of a provider: every field but the key, which is only reported as set. */
export function toLlmProviderView(row: LlmProviderRow): LlmProviderView {
  return {
    id: row.id,
    name: row.name,
    provider_type: row.provider_type,
    base_url: row.base_url ?? null,
    api_key_set: Boolean(row.api_key_encrypted),
    last_synced_at: row.last_synced_at ? row.last_synced_at.toISOString() : null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
