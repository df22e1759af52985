import { UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/core';
import type {
  DefaultModelView,
  LlmModelCreateInput,
  LlmModelListQueryInput,
  LlmModelPatchInput,
  LlmModelView,
} from '../../../schemas/llm.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import { isAnyUuid } from '../../ids.js';
import { LLMSIM_MODEL_ID, LLMSIM_MODEL_UUID } from '../../llm/index.js';
import { LlmModelEntity, LlmProviderEntity, Organization, orgScope, type Store } from '../../db/index.js';
import type { ModelLookup } from '../agents/index.js';
import { assertModelsUnreferenced, type LlmProviderRow, type LlmProviderService } from '../llm-providers/index.js';
import { toLlmModelView, type LlmModelRow } from './model-view.js';

export interface LlmModelServiceDeps {
  store: Store;
  providers: Pick<LlmProviderService, 'getRow'>;
  /**
   * What a turn runs when nothing names a model and the organisation has no default; `llmsim`
   * also makes the built-in model nameable (the operator's LLMSIM_ENABLED), null refuses it.
   */
  systemDefault: 'llmsim' | null;
  /** Called after an organisation's default model changed (the resolver caches it). */
  onDefaultChanged?: (orgId: string) => void;
}

const ORDER = { orderBy: { created_at: 'asc', id: 'asc' } } as const;

/**
 * LLM models: manual additions, listing, PATCH/DELETE, and the organisation default (stored
 * as `organizations.default_model_id`). Discovery lives in the sync service.
 */
export function createLlmModelService({ store, providers, systemDefault, onDefaultChanged }: LlmModelServiceDeps) {
  async function providerMap(em: EntityManager, orgId: string): Promise<Map<string, LlmProviderRow>> {
    const rows = (await orgScope(em, orgId).find(LlmProviderEntity, {})) as LlmProviderRow[];
    return new Map(rows.map((r) => [r.id, r]));
  }

  /** A model addressed by the path: 404 when unknown, 403 when another organisation's. */
  async function getModel(em: EntityManager, orgId: string, id: string): Promise<LlmModelRow> {
    return (await orgScope(em, orgId).getOwned(LlmModelEntity, id.toLowerCase())) as LlmModelRow;
  }

  /** A model named as a reference (the default): 404 unless it is a model of the organisation. */
  async function findModel(em: EntityManager, orgId: string, id: string): Promise<LlmModelRow> {
    const row = isAnyUuid(id)
      ? ((await orgScope(em, orgId).findOne(LlmModelEntity, { id: id.toLowerCase() })) as LlmModelRow | null)
      : null;
    if (!row) throw new NotFoundError();
    return row;
  }

  async function viewOf(em: EntityManager, row: LlmModelRow): Promise<LlmModelView> {
    const provider = (await em.findOneOrFail(LlmProviderEntity, { id: row.provider_id })) as LlmProviderRow;
    return toLlmModelView(row, provider);
  }

  async function listForProvider(orgId: string, providerId: string): Promise<{ data: LlmModelView[]; total: number }> {
    const provider = await providers.getRow(orgId, providerId);
    const rows = (await orgScope(store.em(), orgId).find(LlmModelEntity, { provider_id: provider.id }, ORDER)) as LlmModelRow[];
    return { data: rows.map((r) => toLlmModelView(r, provider)), total: rows.length };
  }

  /** A manual model; 409 when the provider already has that `model_id`. */
  async function create(orgId: string, providerId: string, input: LlmModelCreateInput): Promise<LlmModelView> {
    const provider = await providers.getRow(orgId, providerId);
    const scope = orgScope(store.em(), orgId);
    const row = scope.create(LlmModelEntity, {
      provider_id: provider.id,
      model_id: input.model_id,
      display_name: input.display_name ?? input.model_id,
      capabilities: input.capabilities ?? [],
      enabled: input.enabled ?? true,
      context_window: input.context_window ?? null,
      max_output_tokens: input.max_output_tokens ?? null,
      source: 'manual',
      status: 'active',
    } as never) as LlmModelRow;
    try {
      await scope.em.flush();
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException)
        throw new ConflictError('This provider already has a model with this model_id', { cause: err });
      throw err;
    }
    return toLlmModelView(row, provider);
  }

  async function list(orgId: string, query: LlmModelListQueryInput): Promise<{ data: LlmModelView[]; total: number }> {
    const em = store.em();
    const where: Record<string, unknown> = {};
    for (const key of ['provider_id', 'source', 'status', 'enabled'] as const) if (query[key] !== undefined) where[key] = query[key];
    const [rows, providersById] = await Promise.all([
      orgScope(em, orgId).find(LlmModelEntity, where as never, ORDER) as Promise<LlmModelRow[]>,
      providerMap(em, orgId),
    ]);
    const data = rows.map((r) => toLlmModelView(r, providersById.get(r.provider_id)!));
    return { data, total: data.length };
  }

  async function get(orgId: string, id: string): Promise<LlmModelView> {
    const em = store.em();
    return viewOf(em, await getModel(em, orgId, id));
  }

  async function patch(orgId: string, id: string, input: LlmModelPatchInput): Promise<LlmModelView> {
    const em = store.em();
    const row = await getModel(em, orgId, id);
    if (input.display_name !== undefined) row.display_name = input.display_name;
    if (input.capabilities !== undefined) row.capabilities = input.capabilities;
    if (input.enabled !== undefined) row.enabled = input.enabled;
    if (input.context_window !== undefined) row.context_window = input.context_window;
    if (input.max_output_tokens !== undefined) row.max_output_tokens = input.max_output_tokens;
    await em.flush();
    return viewOf(em, row);
  }

  /** DELETE (admin): 409 while the model is a default anywhere in the organisation. */
  async function remove(orgId: string, id: string): Promise<void> {
    await store.em().transactional(async (em) => {
      const row = await getModel(em, orgId, id);
      await assertModelsUnreferenced(em, orgId, [row.id], 'This model');
      em.remove(row);
      await em.flush();
    });
  }

  async function defaultView(em: EntityManager, orgId: string, modelId: string | null): Promise<DefaultModelView> {
    const row = modelId ? ((await orgScope(em, orgId).findOne(LlmModelEntity, { id: modelId })) as LlmModelRow | null) : null;
    return { model_id: row ? row.id : null, model: row ? await viewOf(em, row) : null, system_default: systemDefault };
  }

  async function getDefault(orgId: string): Promise<DefaultModelView> {
    const em = store.em();
    const org = await em.findOneOrFail(Organization, { id: orgId });
    return defaultView(em, orgId, org.default_model_id ?? null);
  }

  /** PUT default (admin): a model of the organisation (404 otherwise), or null to clear it. */
  async function setDefault(orgId: string, modelId: string | null): Promise<DefaultModelView> {
    const em = store.em();
    const row = modelId === null ? null : await findModel(em, orgId, modelId);
    const org = await em.findOneOrFail(Organization, { id: orgId });
    org.default_model_id = row ? row.id : null;
    await em.flush();
    onDefaultChanged?.(orgId);
    return defaultView(em, orgId, org.default_model_id);
  }

  /** For agents, harnesses and sessions: does the id name a model of the organisation (or the built-in one, when enabled)? */
  const lookup: ModelLookup = {
    async exists(orgId, modelId) {
      if (modelId.toLowerCase() === LLMSIM_MODEL_UUID) return systemDefault === 'llmsim';
      if (!isAnyUuid(modelId)) return false;
      return (await orgScope(store.em(), orgId).count(LlmModelEntity, { id: modelId.toLowerCase() })) > 0;
    },
    async idsByName(orgId, name) {
      // The built-in model's name is reserved to it (issue 30 item 18); disabled, it names nothing.
      if (name === LLMSIM_MODEL_ID) return systemDefault === 'llmsim' ? [LLMSIM_MODEL_UUID] : [];
      const rows = (await orgScope(store.em(), orgId).find(LlmModelEntity, { model_id: name }, { orderBy: { id: 'asc' } })) as {
        id: string;
      }[];
      return rows.map((r) => r.id);
    },
  };

  return { listForProvider, create, list, get, patch, remove, getDefault, setDefault, lookup };
}

export type LlmModelService = ReturnType<typeof createLlmModelService>;
