import { LockMode, type EntityManager } from '@mikro-orm/core';
import type { SyncModelsResultView } from '../../../schemas/llm.js';
import { DecryptionError } from '../../crypto/index.js';
import { NotFoundError, ServiceUnavailableError, UnprocessableError } from '../../errors.js';
import { createLlmProvider, LlmError, type LlmModelInfo, type LlmProviderOptions, type LlmProviderType } from '../../llm/index.js';
import type { Logger } from '../../log.js';
import { LlmModelEntity, LlmProviderEntity, orgScope, type Store } from '../../db/index.js';
import type { LlmProviderRow, LlmProviderService } from '../llm-providers/index.js';
import type { LlmModelRow } from './model-view.js';

export interface ModelSyncDeps {
  store: Store;
  providers: Pick<LlmProviderService, 'getRow' | 'openConfig'>;
  log: Logger;
  /**
   * Test-only: where the SDK lists models for a provider type instead of the vendor's default
   * URL. A provider's own `base_url` still means `not_supported`.
   */
  baseUrlOverride?: Partial<Record<LlmProviderType, string>>;
  /** Retry settings of the listing call (defaults of `createLlmProvider`). */
  llm?: Partial<LlmProviderOptions>;
}

type SyncCounts = { created: number; updated: number; stale: number };

/** A failed listing as an API error: credentials and bad requests are 422, the rest 503. */
function listingError(err: LlmError): Error {
  if (err.kind === 'auth' || err.kind === 'bad_request') return new UnprocessableError(`Model sync failed: ${err.message}`, { cause: err });
  return new ServiceUnavailableError(`Model sync failed: ${err.message}`, { cause: err });
}

/**
 * The limits a listing changes on a known row: a discovered row follows the vendor; a manual
 * row's own values win, the listing only fills what it left unset. Null: nothing changes.
 */
function listedLimits(row: LlmModelRow, info: LlmModelInfo): Partial<Pick<LlmModelRow, 'context_window' | 'max_output_tokens'>> | null {
  const out: Partial<Pick<LlmModelRow, 'context_window' | 'max_output_tokens'>> = {};
  for (const key of ['context_window', 'max_output_tokens'] as const) {
    const listed = info[key];
    if (listed === undefined || listed === row[key]) continue;
    if (row.source === 'discovered' || row[key] === null || row[key] === undefined) out[key] = listed;
  }
  return Object.keys(out).length ? out : null;
}

/**
 * Applies a listing to the provider's models under a row lock on the provider (concurrent
 * syncs serialise): new ids are created (`discovered`, enabled), known ones get their name
 * and `active` status back, and discovered models no longer listed are marked `stale`.
 * Manual models are never marked stale.
 */
async function applyListing(em: EntityManager, orgId: string, providerId: string, listed: LlmModelInfo[]): Promise<SyncCounts> {
  const provider = (await em.findOne(
    LlmProviderEntity,
    { id: providerId, organization_id: orgId },
    { lockMode: LockMode.PESSIMISTIC_WRITE },
  )) as LlmProviderRow | null;
  if (!provider) throw new NotFoundError();
  const scope = orgScope(em, orgId);
  const existing = new Map(((await scope.find(LlmModelEntity, { provider_id: providerId })) as LlmModelRow[]).map((m) => [m.model_id, m]));
  const counts: SyncCounts = { created: 0, updated: 0, stale: 0 };
  const seen = new Set<string>();
  for (const info of listed) {
    if (seen.has(info.id)) continue;
    seen.add(info.id);
    const row = existing.get(info.id);
    if (!row) {
      scope.create(LlmModelEntity, {
        provider_id: providerId,
        model_id: info.id,
        display_name: info.display_name || info.id,
        capabilities: ['chat'],
        enabled: true,
        context_window: info.context_window ?? null,
        max_output_tokens: info.max_output_tokens ?? null,
        source: 'discovered',
        status: 'active',
      } as never);
      counts.created++;
      continue;
    }
    const name = row.source === 'discovered' && info.display_name ? info.display_name : row.display_name;
    const limits = listedLimits(row, info);
    if (row.status !== 'active' || name !== row.display_name || limits) {
      Object.assign(row, { status: 'active', display_name: name, ...limits });
      counts.updated++;
    }
  }
  for (const row of existing.values()) {
    if (!seen.has(row.model_id) && row.source === 'discovered' && row.status === 'active') {
      row.status = 'stale';
      counts.stale++;
    }
  }
  provider.last_synced_at = new Date();
  await em.flush();
  return counts;
}

/** `POST /v1/llm-providers/{id}/sync-models`: the vendor's model listing through its SDK. */
export function createModelSyncService({ store, providers, log, baseUrlOverride = {}, llm }: ModelSyncDeps) {
  async function list(row: LlmProviderRow): Promise<LlmModelInfo[] | null> {
    let config: ReturnType<LlmProviderService['openConfig']>;
    try {
      config = providers.openConfig(row);
    } catch (err) {
      if (!(err instanceof DecryptionError)) throw err;
      log.warn({ providerId: row.id, reason: err.reason }, 'llm provider key cannot be decrypted');
      throw new UnprocessableError('The provider API key cannot be decrypted; set it again with PATCH', { cause: err });
    }
    const provider = createLlmProvider({ ...config, base_url: baseUrlOverride[row.provider_type] ?? null }, llm);
    if (!provider.listModels) return null;
    try {
      return await provider.listModels();
    } catch (err) {
      if (err instanceof LlmError) throw listingError(err);
      throw err;
    }
  }

  async function sync(orgId: string, providerId: string): Promise<SyncModelsResultView> {
    const row = await providers.getRow(orgId, providerId);
    if (row.base_url) return { status: 'not_supported' };
    const listed = await list(row);
    if (!listed) return { status: 'not_supported' };
    const counts = await store.em().transactional((em) => applyListing(em, orgId, row.id, listed));
    log.info({ providerId: row.id, listed: listed.length, ...counts }, 'llm models synced');
    return { status: 'success', ...counts };
  }

  return { sync };
}

export type ModelSyncService = ReturnType<typeof createModelSyncService>;
