import type { InferEntity } from '@mikro-orm/core';
import type { LlmModelView } from '../../../schemas/llm.js';
import { effectiveLimits } from '../../llm/index.js';
import type { LlmModelEntity } from '../../db/index.js';
import type { LlmProviderRow } from '../llm-providers/index.js';

/** A loaded model row. */
export type LlmModelRow = InferEntity<typeof LlmModelEntity>;

/** The provider fields a model view repeats. */
export type ModelProviderInfo = Pick<LlmProviderRow, 'name' | 'provider_type'>;

/** The API shape of a model, with its provider's name and type. */
export function toLlmModelView(row: LlmModelRow, provider: ModelProviderInfo): LlmModelView {
  return {
    id: row.id,
    provider_id: row.provider_id,
    provider_name: provider.name,
    provider_type: provider.provider_type,
    model_id: row.model_id,
    display_name: row.display_name,
    capabilities: row.capabilities ?? [],
    enabled: row.enabled,
    ...effectiveLimits(row.model_id, row),
    source: row.source,
    status: row.status,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
