/**
 * Context windows and output limits of known model families (issue 26): used when a model
 * record does not state its own (a manual model added without them, a vendor whose listing
 * does not say). Matched by the longest prefix of the vendor's model name; figures are the
 * vendors' published limits, rounded down where a family's members differ.
 */

export interface ModelLimits {
  /** Tokens one request may hold, prompt and output together. */
  context_window: number;
  /** Most tokens one call generates. */
  max_output_tokens: number;
}

/** Longest prefix first is not required: `familyLimits` picks the longest match. */
const FAMILIES: readonly (readonly [prefix: string, limits: ModelLimits])[] = [
  ['gpt-4o', { context_window: 128_000, max_output_tokens: 16_384 }],
  ['gpt-4.1', { context_window: 1_047_576, max_output_tokens: 32_768 }],
  ['gpt-4-turbo', { context_window: 128_000, max_output_tokens: 4_096 }],
  ['gpt-4', { context_window: 8_192, max_output_tokens: 8_192 }],
  ['gpt-3.5-turbo', { context_window: 16_385, max_output_tokens: 4_096 }],
  ['gpt-5', { context_window: 400_000, max_output_tokens: 128_000 }],
  ['o1', { context_window: 200_000, max_output_tokens: 100_000 }],
  ['o3', { context_window: 200_000, max_output_tokens: 100_000 }],
  ['o4-mini', { context_window: 200_000, max_output_tokens: 100_000 }],
  ['claude-3', { context_window: 200_000, max_output_tokens: 4_096 }],
  ['claude-3-5', { context_window: 200_000, max_output_tokens: 8_192 }],
  ['claude-3-7', { context_window: 200_000, max_output_tokens: 64_000 }],
  ['claude-sonnet-4', { context_window: 200_000, max_output_tokens: 64_000 }],
  ['claude-opus-4', { context_window: 200_000, max_output_tokens: 32_000 }],
  ['claude-haiku-4', { context_window: 200_000, max_output_tokens: 64_000 }],
  ['gemini-1.5', { context_window: 1_000_000, max_output_tokens: 8_192 }],
  ['gemini-2.0', { context_window: 1_048_576, max_output_tokens: 8_192 }],
  ['gemini-2.5', { context_window: 1_048_576, max_output_tokens: 65_536 }],
  ['gemini-3', { context_window: 1_048_576, max_output_tokens: 65_536 }],
];

/** The known family's limits for a vendor model name, or null when the family is unknown. */
export function familyLimits(model: string): ModelLimits | null {
  const name = model.toLowerCase().replace(/^models\//, '');
  let best: (typeof FAMILIES)[number] | null = null;
  for (const f of FAMILIES) if (name.startsWith(f[0]) && (!best || f[0].length > best[0].length)) best = f;
  return best ? best[1] : null;
}

/** A record's limits with the family's filling what it does not state (null: unknown). */
export function effectiveLimits(
  model: string,
  stored: { context_window?: number | null; max_output_tokens?: number | null },
): { context_window: number | null; max_output_tokens: number | null } {
  const family = familyLimits(model);
  return {
    context_window: stored.context_window ?? family?.context_window ?? null,
    max_output_tokens: stored.max_output_tokens ?? family?.max_output_tokens ?? null,
  };
}

const positive = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n > 0 && n <= 100_000_000;

/** A vendor listing's limit fields, kept only when they are plausible token counts. */
export function listedLimits(input: unknown, output: unknown): { context_window?: number; max_output_tokens?: number } {
  return { ...(positive(input) ? { context_window: input } : {}), ...(positive(output) ? { max_output_tokens: output } : {}) };
}
