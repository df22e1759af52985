/**
 * Model resolution (architecture 6): the turn picks the first model id set among message
 * controls, the session, the agent and the harness, and hands it (or null) to a
 * `ModelResolver`, which owns everything after that: the organisation's default, model rows,
 * decrypted provider keys, and the system default. The providers module plugs its own
 * implementation in; the default here knows no model rows and serves the built-in `llmsim`.
 */
import { NotFoundError } from '../src/errors.js';
import { createLlmProvider, LLMSIM_MODEL_ID, type LlmProvider, type LlmProviderOptions } from '../src/llm/index.js';

export interface ResolvedModel {
  provider: LlmProvider;
  /** The vendor's model name sent on the wire (e.g. `gpt-5`, `llmsim`). */
  model: string;
  /** The model record's id; `llmsim` for the built-in default. */
  model_id: string;
  /** The provider record's id; `llmsim` for the built-in default. */
  provider_id: string;
  /** Upper bound for `controls.max_tokens`, when the model record knows it. */
  max_output_tokens?: number;
}

export interface ModelResolver {
  /**
   * The model to run. `modelId` null means "no override anywhere": the organisation's default,
   * else the system default. Throws `NotFoundError` for an id that is not a model of the org.
   */
  resolve(orgId: string, modelId: string | null): Promise<ResolvedModel>;
}

/** The highest `max_tokens` accepted when a model does not state its own limit. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 1_000_000;

/** First id set, in the order message controls > session > agent > harness (null: none). */
export function pickModelId(...candidates: (string | null | undefined)[]): string | null {
  for (const c of candidates) if (c) return c;
  return null;
}

export interface BuiltinModelResolverOptions {
  /** Retry settings of the built-in provider (defaults of `createLlmProvider`). */
  llm?: Partial<LlmProviderOptions>;
}

/**
 * The resolver used until model rows exist: null and `llmsim` resolve to the built-in
 * simulator; any other id is unknown (404 on a message, `llm_error` inside a turn).
 */
export function createBuiltinModelResolver(opts: BuiltinModelResolverOptions = {}): ModelResolver {
  const llmsim: ResolvedModel = {
    provider: createLlmProvider({ provider_type: 'llmsim', api_key: '' }, opts.llm),
    model: LLMSIM_MODEL_ID,
    model_id: LLMSIM_MODEL_ID,
    provider_id: LLMSIM_MODEL_ID,
  };
  return {
    async resolve(_orgId, modelId) {
      if (modelId === null || modelId === LLMSIM_MODEL_ID) return llmsim;
      throw new NotFoundError();
    },
  };
}
