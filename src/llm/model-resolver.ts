/**
 * Model resolution (architecture 6): the turn picks the first model id set among message
 * controls, the session, the agent and the harness, and hands it (or null) to a
 * `ModelResolver`, which owns everything after that: the organisation's default, model rows,
 * decrypted provider keys, and the system default. The llm-models module implements it.
 */
import type { ModelProviderRow } from '../db/index.js';
import type { LlmProvider } from './types.js';

export interface ResolvedModel {
  provider: LlmProvider;
  /** The vendor's model name sent on the wire (e.g. `gpt-5`, `llmsim`). */
  model: string;
  /** The model record's id; `llmsim` for the built-in default. */
  model_id: string;
  /** The provider record's id; `llmsim` for the built-in default. */
  provider_id: string;
  /** Upper bound for `controls.max_tokens`, when the model record (or its family) knows it. */
  max_output_tokens?: number;
  /** Tokens one request may hold, when the record (or its family) knows it; compaction keeps under it. */
  context_window?: number;
}

export interface ModelResolver {
  /**
   * The model to run. `modelId` null means "no override anywhere": the organisation's default,
   * else the system default. Throws `NotFoundError` for an id that is not a model of the org.
   */
  resolve(orgId: string, modelId: string | null): Promise<ResolvedModel>;
  /**
   * `resolve` with the model's row read by the caller (`modelProviderSql` joined into its own
   * statement; null: the id is not a model of the org), so the resolve itself reads nothing.
   */
  resolveRow(orgId: string, modelId: string | null, row: ModelProviderRow | null): Promise<ResolvedModel>;
}

/** The highest `max_tokens` accepted when a model does not state its own limit. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 1_000_000;

/** First id set, in the order message controls > session > agent > harness (null: none). */
export function pickModelId(...candidates: (string | null | undefined)[]): string | null {
  for (const c of candidates) if (c) return c;
  return null;
}
