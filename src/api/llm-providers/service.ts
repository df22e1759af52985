import type { LlmProviderCreateInput, LlmProviderPatchInput, LlmProviderView } from '../../../schemas/llm.js';
import type { Keyring } from '../../crypto/index.js';
import { newId } from '../../ids.js';
import type { LlmProviderConfig } from '../../llm/index.js';
import type { Logger } from '../../log.js';
import { LlmModelEntity, LlmProviderEntity, orgScope, type Store } from '../../db/index.js';
import { InvalidRequestError, UnprocessableError } from '../../errors.js';
import type { AssertBaseUrlAllowed } from './base-url-policy.js';
import { assertModelsUnreferenced } from './model-references.js';
import { openProviderKey, sealProviderKey } from './provider-key.js';
import { toLlmProviderView, type LlmProviderRow } from './provider-view.js';

export interface LlmProviderServiceDeps {
  store: Store;
  keyring: Keyring;
  log: Logger;
  /** Called after a provider's key or URL changed or it was deleted (cached clients are dropped). */
  onChanged?: (providerId: string) => void;
  /** Refuses base URLs on private addresses (400); default: no check. */
  assertBaseUrlAllowed?: AssertBaseUrlAllowed;
  /** The operator's LLMSIM_ENABLED: false refuses providers of type `llmsim` (422); default false. */
  llmsimEnabled?: boolean;
}

/** Who asks: a tenant through the API (checked), or the operator's configuration (exempt). */
export interface ProviderWriteOptions {
  source: 'api' | 'operator';
}

/** A base URL as stored: trimmed, no trailing slash; '' counts as none. */
function normalizeBaseUrl(url: string | null | undefined): string | null {
  const trimmed = url?.trim().replace(/\/+$/, '');
  return trimmed ? trimmed : null;
}

/**
 * LLM providers (spec 2.6, 4.4). The API key is sealed on write with AAD bound to the
 * organisation, the provider row, its type and base URL, and only ever opened by `openConfig`
 * for the model resolver and model sync. Nothing here logs or returns it. Base URLs from the
 * API go through `assertBaseUrlAllowed` (private addresses need the operator's allowlist).
 */
export function createLlmProviderService({
  store,
  keyring,
  log,
  onChanged,
  assertBaseUrlAllowed = async () => {},
  llmsimEnabled = false,
}: LlmProviderServiceDeps) {
  /** A tenant cannot reach the built-in simulator through a provider of its type when the operator has it off. */
  function assertTypeAvailable(type: string): void {
    if (type === 'llmsim' && !llmsimEnabled) throw new UnprocessableError('The built-in llmsim provider is not enabled on this service');
  }

  async function create(
    orgId: string,
    input: LlmProviderCreateInput,
    { source }: ProviderWriteOptions = { source: 'api' },
  ): Promise<LlmProviderView> {
    const scope = orgScope(store.em(), orgId);
    const id = newId();
    const baseUrl = normalizeBaseUrl(input.base_url);
    if (source === 'api') await assertBaseUrlAllowed(baseUrl);
    assertTypeAvailable(input.provider_type);
    const destination = { id, organization_id: orgId, provider_type: input.provider_type, base_url: baseUrl };
    const row = scope.create(LlmProviderEntity, {
      id,
      name: input.name,
      provider_type: input.provider_type,
      base_url: baseUrl,
      api_key_encrypted: sealProviderKey(keyring, destination, input.api_key),
      last_synced_at: null,
    } as never) as LlmProviderRow;
    await scope.em.flush();
    log.info({ providerId: id, provider_type: row.provider_type }, 'llm provider created');
    return toLlmProviderView(row);
  }

  async function list(orgId: string): Promise<{ data: LlmProviderView[]; total: number }> {
    const rows = (await orgScope(store.em(), orgId).find(
      LlmProviderEntity,
      {},
      { orderBy: { created_at: 'asc', id: 'asc' } },
    )) as LlmProviderRow[];
    return { data: rows.map(toLlmProviderView), total: rows.length };
  }

  /** The row (with its sealed key): 404 unknown, 403 another organisation's. */
  async function getRow(orgId: string, id: string): Promise<LlmProviderRow> {
    return (await orgScope(store.em(), orgId).getOwned(LlmProviderEntity, id)) as LlmProviderRow;
  }

  async function get(orgId: string, id: string): Promise<LlmProviderView> {
    return toLlmProviderView(await getRow(orgId, id));
  }

  /**
   * PATCH: only the given fields change. A new destination (`base_url` or `provider_type`)
   * needs a new `api_key` in the same request (400 otherwise): the stored key is bound to the
   * old destination and must never be sent to the new one. A new key is sealed for the row's
   * (new) destination.
   */
  async function patch(orgId: string, id: string, input: LlmProviderPatchInput): Promise<LlmProviderView> {
    const scope = orgScope(store.em(), orgId);
    const row = (await scope.getOwned(LlmProviderEntity, id)) as LlmProviderRow;
    const baseUrl = input.base_url !== undefined ? normalizeBaseUrl(input.base_url) : (row.base_url ?? null);
    const providerType = input.provider_type ?? row.provider_type;
    const moved = baseUrl !== (row.base_url ?? null) || providerType !== row.provider_type;
    if (moved && input.api_key === undefined) {
      throw new InvalidRequestError(
        'Invalid request: changing base_url or provider_type needs a new api_key in the same request (the stored key stays bound to the old destination)',
      );
    }
    if (moved) await assertBaseUrlAllowed(baseUrl);
    if (providerType !== row.provider_type) assertTypeAvailable(providerType);
    if (input.name !== undefined) row.name = input.name;
    row.base_url = baseUrl;
    row.provider_type = providerType;
    if (input.api_key !== undefined) row.api_key_encrypted = sealProviderKey(keyring, row, input.api_key);
    row.updated_at = new Date();
    await scope.em.flush();
    onChanged?.(row.id);
    if (input.api_key !== undefined) log.info({ providerId: row.id }, 'llm provider key replaced');
    return toLlmProviderView(row);
  }

  /**
   * DELETE (admin): refused with 409 while one of the provider's models is a default of an
   * agent, harness, session or the organisation; otherwise the provider and its models go.
   */
  async function remove(orgId: string, id: string): Promise<void> {
    await store.em().transactional(async (em) => {
      const scope = orgScope(em, orgId);
      const row = (await scope.getOwned(LlmProviderEntity, id)) as LlmProviderRow;
      const models = await scope.find(LlmModelEntity, { provider_id: row.id }, { fields: ['id'] as never });
      await assertModelsUnreferenced(
        em,
        orgId,
        models.map((m) => m.id),
        'A model of this provider',
      );
      await em.nativeDelete(LlmModelEntity, { provider_id: row.id });
      em.remove(row);
      await em.flush();
    });
    onChanged?.(id);
    log.info({ providerId: id }, 'llm provider deleted');
  }

  /** The connection settings with the key opened (throws `DecryptionError` when it cannot be). */
  function openConfig(row: LlmProviderRow): LlmProviderConfig {
    return { provider_type: row.provider_type, api_key: openProviderKey(keyring, row), base_url: row.base_url ?? null };
  }

  return { create, list, get, getRow, patch, remove, openConfig };
}

export type LlmProviderService = ReturnType<typeof createLlmProviderService>;
