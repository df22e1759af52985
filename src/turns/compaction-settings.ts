/**
 * The compaction settings of agents and sessions (issue 26; docs/decisions/0103): checked on
 * write, merged per turn. A tenant may lower the threshold, never lift it past the operator's
 * COMPACTION_THRESHOLD_PERCENT (a server guard: 422); the summariser must be a model of the
 * organisation (404, like `default_model_id`).
 */
import type { CompactionSettingsInput } from '../../schemas/compaction.js';
import { NotFoundError, UnprocessableError } from '../errors.js';

export interface CompactionSettingsBounds {
  /** The operator's COMPACTION_THRESHOLD_PERCENT. */
  maxThresholdPercent: number;
  /** Whether `modelId` is a model of the writer's organisation (absent: any UUID is accepted). */
  modelExists?(modelId: string): Promise<boolean>;
}

/** The settings as stored: only the fields set (the model id lower-cased); null when none is. */
export async function checkCompactionSettings(
  input: CompactionSettingsInput | null | undefined,
  bounds: CompactionSettingsBounds,
): Promise<CompactionSettingsInput | null> {
  const out: CompactionSettingsInput = {};
  const threshold = input?.threshold_percent;
  if (threshold != null) {
    if (threshold > bounds.maxThresholdPercent)
      throw new UnprocessableError(
        `compaction.threshold_percent may be at most ${bounds.maxThresholdPercent} (the server's COMPACTION_THRESHOLD_PERCENT)`,
      );
    out.threshold_percent = threshold;
  }
  const modelId = input?.model_id?.toLowerCase();
  if (modelId) {
    if (bounds.modelExists && !(await bounds.modelExists(modelId)))
      throw new NotFoundError('Not found: compaction.model_id is not a model of this organization');
    out.model_id = modelId;
  }
  return Object.keys(out).length ? out : null;
}

/** What a turn compacts with: the session's fields over its agent's; null: the server's threshold, the session's model. */
export interface EffectiveCompaction {
  thresholdPercent: number | null;
  modelId: string | null;
}

export function effectiveCompaction(
  agent: CompactionSettingsInput | null | undefined,
  session: CompactionSettingsInput | null | undefined,
): EffectiveCompaction {
  return {
    thresholdPercent: session?.threshold_percent ?? agent?.threshold_percent ?? null,
    modelId: session?.model_id ?? agent?.model_id ?? null,
  };
}
