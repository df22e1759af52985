import { LRUCache } from 'lru-cache';
import { DecryptionError, type Keyring } from '../../crypto/index.js';
import { NotFoundError } from '../../errors.js';
import { isAnyUuid } from '../../ids.js';
import {
  createLlmProvider,
  LlmError,
  LLMSIM_MODEL_ID,
  LLMSIM_MODEL_UUID,
  defaultLlmsimLimits,
  effectiveLimits,
  type LlmProvider,
  type LlmProviderOptions,
} from '../../llm/index.js';
import type { Logger } from '../../log.js';
import { modelProviderSql, Organization, type ModelProviderRow, type Store } from '../../db/index.js';
import { openProviderKey } from '../llm-providers/index.js';
import type { ResolvedModel } from '../../llm/index.js';

export type { ResolvedModel };

export interface ModelResolverDeps {
  store: Store;
  keyring: Keyring;
  log: Logger;
  /**
   * `llmsim` (the operator's LLMSIM_ENABLED): the built-in simulator when nothing is configured,
   * and nameable; null: it is refused wherever it is named (404), providers of its type included.
   */
  systemDefault: 'llmsim' | null;
  /** Retry settings of the providers built here (defaults of `createLlmProvider`). */
  llm?: Partial<LlmProviderOptions>;
}

export interface ModelResolverOptions {
  /** How long a built provider (with its opened key) is reused, in ms (default 60 000). */
  cacheTtlMs: number;
  /** Most providers kept at once; the least recently used goes first (default 256). */
  maxCachedProviders: number;
  /**
   * How long an organisation's default model id is reused, in ms (default 5 000). A change made
   * through this instance (`invalidateDefault`) is seen at once, one made elsewhere within this time.
   */
  defaultCacheTtlMs: number;
}

export const DEFAULT_PROVIDER_CACHE_TTL_MS = 60_000;
export const DEFAULT_MAX_CACHED_PROVIDERS = 256;
export const DEFAULT_ORG_DEFAULT_CACHE_TTL_MS = 5_000;
/** Organisations whose default is remembered at once; the least recently used goes first. */
const MAX_CACHED_ORG_DEFAULTS = 10_000;

interface CachedProvider {
  /** Type, URL and sealed key of the row it was built from: any change rebuilds it. */
  fingerprint: string;
  provider: LlmProvider;
  expiresAt: number;
}

type ProviderKeyRow = Pick<ModelProviderRow, 'id' | 'organization_id' | 'provider_type' | 'base_url' | 'api_key_encrypted'>;

const fingerprintOf = (row: ProviderKeyRow) => `${row.provider_type}\n${row.base_url ?? ''}\n${row.api_key_encrypted}`;

/**
 * The model resolver (architecture 6). The turn passes the first model id set among message
 * controls, session, agent and harness; null falls back to the organisation default, then to
 * the system default. Providers are built once per row version and cached briefly; a changed
 * row (key, URL, type) is noticed on the next resolve on every instance, and `invalidate`
 * drops a provider at once on the instance that changed it.
 */
export function createModelResolver(deps: ModelResolverDeps, opts: Partial<ModelResolverOptions> = {}) {
  const { store, keyring, log, systemDefault, llm } = deps;
  const {
    cacheTtlMs = DEFAULT_PROVIDER_CACHE_TTL_MS,
    maxCachedProviders = DEFAULT_MAX_CACHED_PROVIDERS,
    defaultCacheTtlMs = DEFAULT_ORG_DEFAULT_CACHE_TTL_MS,
  } = opts;
  const cache = new LRUCache<string, CachedProvider>({ max: maxCachedProviders });
  // Every turn without a model override asks for its organisation's default: one ORM query each.
  const orgDefaults = new LRUCache<string, { modelId: string | null }>({
    max: MAX_CACHED_ORG_DEFAULTS,
    ttl: defaultCacheTtlMs, // 0 caches nothing: orgDefaultId then never stores
  });
  let llmsim: ResolvedModel | undefined;

  function builtin(): ResolvedModel {
    llmsim ??= {
      provider: createLlmProvider({ provider_type: 'llmsim', api_key: '' }, llm),
      model: LLMSIM_MODEL_ID,
      model_id: LLMSIM_MODEL_ID,
      provider_id: LLMSIM_MODEL_ID,
      context_window: (llm?.llmsim ?? defaultLlmsimLimits()).contextWindow,
    };
    return llmsim;
  }

  function build(row: ProviderKeyRow): LlmProvider {
    if (row.provider_type === 'llmsim' && systemDefault !== 'llmsim') throw llmsimDisabled();
    let apiKey: string;
    try {
      apiKey = openProviderKey(keyring, row);
    } catch (err) {
      if (!(err instanceof DecryptionError)) throw err;
      log.warn({ providerId: row.id, reason: err.reason }, 'llm provider key cannot be decrypted');
      throw new LlmError('auth', { vendorCode: 'api_key_unavailable', retryable: false }, { cause: err });
    }
    return createLlmProvider({ provider_type: row.provider_type, api_key: apiKey, base_url: row.base_url ?? null }, llm);
  }

  function providerFor(row: ProviderKeyRow): LlmProvider {
    const now = Date.now();
    const fingerprint = fingerprintOf(row);
    const hit = cache.get(row.id);
    if (hit && hit.fingerprint === fingerprint && hit.expiresAt > now) return hit.provider;
    const provider = build(row);
    cache.set(row.id, { fingerprint, provider, expiresAt: now + cacheTtlMs });
    return provider;
  }

  /** The model and its provider (was two ORM lookups per turn); read on every resolve, see `modelProviderSql`. */
  async function modelRow(orgId: string, modelId: string): Promise<ModelProviderRow | null> {
    if (!isAnyUuid(modelId)) return null;
    const rows = await store.sql<ModelProviderRow>(modelProviderSql('?', '?'), [modelId.toLowerCase(), orgId]);
    return rows[0] ?? null;
  }

  function resolved(row: ModelProviderRow): ResolvedModel {
    const out: ResolvedModel = { provider: providerFor(row), model: row.model_id, model_id: row.model_row_id, provider_id: row.id };
    // A row read before migration 0027 (a cached fold) has no limit columns: undefined = not stated.
    const limits = row.provider_type === 'llmsim' ? llmsimLimits(row) : effectiveLimits(row.model_id, row);
    if (limits.context_window !== null) out.context_window = limits.context_window;
    if (limits.max_output_tokens !== null) out.max_output_tokens = limits.max_output_tokens;
    return out;
  }

  /** A manual llmsim model states its own limits, else it has the simulator's configured window. */
  function llmsimLimits(row: ModelProviderRow): { context_window: number | null; max_output_tokens: number | null } {
    return {
      context_window: row.context_window ?? (llm?.llmsim ?? defaultLlmsimLimits()).contextWindow,
      max_output_tokens: row.max_output_tokens ?? null,
    };
  }

  function systemFallback(): ResolvedModel {
    if (systemDefault === 'llmsim') return builtin();
    throw new NotFoundError('No LLM model is configured: set a default model for the organization');
  }

  async function orgDefaultId(orgId: string): Promise<string | null> {
    const hit = orgDefaults.get(orgId);
    if (hit) return hit.modelId;
    const org = await store.em().findOne(Organization, { id: orgId });
    const modelId = org?.default_model_id ?? null;
    if (defaultCacheTtlMs > 0) orgDefaults.set(orgId, { modelId });
    return modelId;
  }

  /** Model `modelId` from its row as read (null: not a model of the organisation). */
  function fromRow(modelId: string, row: ModelProviderRow | null): ResolvedModel {
    const id = modelId.toLowerCase();
    if (id === LLMSIM_MODEL_ID || id === LLMSIM_MODEL_UUID) {
      if (systemDefault === 'llmsim') return builtin();
      throw llmsimDisabled();
    }
    if (!row) throw new NotFoundError();
    return resolved(row);
  }

  async function resolve(orgId: string, modelId: string | null): Promise<ResolvedModel> {
    // `llmsim` is not a uuid: modelRow answers null without a statement.
    return modelId === null ? resolveDefault(orgId) : fromRow(modelId, await modelRow(orgId, modelId));
  }

  /** `resolve` for a caller that read the model's row itself, with `modelProviderSql` inside its own statement. */
  async function resolveRow(orgId: string, modelId: string | null, row: ModelProviderRow | null): Promise<ResolvedModel> {
    return modelId === null ? resolveDefault(orgId) : fromRow(modelId, row);
  }

  async function resolveDefault(orgId: string): Promise<ResolvedModel> {
    const defaultId = await orgDefaultId(orgId);
    if (defaultId) {
      const found = await modelRow(orgId, defaultId);
      if (found) return resolved(found);
      log.warn({ orgId, modelId: defaultId }, 'organization default model no longer exists; using the system default');
    }
    return systemFallback();
  }

  return {
    resolve,
    resolveRow,
    /** Drops the cached provider built from this provider row (its key or URL changed). */
    invalidate(providerId: string): void {
      cache.delete(providerId);
    },
    /** Forgets the organisation's cached default model id (it was just changed). */
    invalidateDefault(orgId: string): void {
      orgDefaults.delete(orgId);
    },
    /** Number of cached providers (for tests). */
    cachedCount: () => cache.size,
  };
}

function llmsimDisabled(): NotFoundError {
  return new NotFoundError('Not found: the built-in model llmsim is not enabled on this service');
}

export type LlmModelResolver = ReturnType<typeof createModelResolver>;
