import type { LlmProviderType } from './types.js';

/**
 * Encodes and decodes the opaque `provider_state` string carried by `done` events and
 * assistant messages. The provider type is stamped in, so state written by one vendor's
 * adapter is ignored by another's (a session may switch models between turns).
 */
export function encodeProviderState(provider: LlmProviderType, data: Record<string, unknown>): string {
  return JSON.stringify({ p: provider, ...data });
}

/** Returns the decoded data when it was written by `provider`, else undefined. */
export function decodeProviderState(provider: LlmProviderType, state: string | undefined): Record<string, unknown> | undefined {
  if (!state) return undefined;
  try {
    const parsed: unknown = JSON.parse(state);
    if (parsed && typeof parsed === 'object' && (parsed as { p?: unknown }).p === provider) return parsed as Record<string, unknown>;
  } catch {
    // not ours
  }
  return undefined;
}
