import type { InferEntity } from '@mikro-orm/core';
import type { HarnessView } from '../../../schemas/harnesses.js';
import type { Harness } from '../../db/index.js';

/** A loaded harness row. */
export type HarnessRow = InferEntity<typeof Harness>;

/** The API shape of a harness row; built-in harnesses have no organisation. */
export function toHarnessView(row: HarnessRow): HarnessView {
  return {
    id: row.id,
    name: row.name,
    description: row.description ?? null,
    system_prompt: row.system_prompt,
    capabilities: row.capabilities ?? [],
    default_model_id: row.default_model_id ?? null,
    max_iterations: row.max_iterations ?? null,
    is_built_in: row.organization_id == null,
    status: row.status,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
