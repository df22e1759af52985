import type { EntityManager } from '@mikro-orm/core';
import type { HarnessCreateInput, HarnessPatchInput, HarnessView } from '../../../schemas/harnesses.js';
import { validateCapabilityRefs, type CapabilityRegistry } from '../../capabilities/index.js';
import { ForbiddenError, NotFoundError, UnprocessableError } from '../../errors.js';
import { Harness, type Store } from '../../db/index.js';
import { checkAgentLimits, type ModelLookup } from '../agents/index.js';
import { BUILT_IN_HARNESSES } from './built-in.js';
import { toHarnessView, type HarnessRow } from './view.js';

export interface HarnessServiceDeps {
  store: Store;
  capabilities: CapabilityRegistry;
  /** Checks `default_model_id` against the organisation's models; when absent any UUID is accepted. */
  models?: ModelLookup;
}

/** How long a built-in harness row read for a new session is reused, in ms. */
const BUILT_IN_CACHE_TTL_MS = 5_000;
const BUILT_IN_IDS: ReadonlySet<string> = new Set(BUILT_IN_HARNESSES.map((h) => h.id.toLowerCase()));

/**
 * Harnesses: the built-ins (no organisation, shared, read-only) plus each organisation's
 * custom ones. Reads see both; writes (admin routes) touch only the caller's custom harnesses.
 */
export function createHarnessService({ store, capabilities, models }: HarnessServiceDeps) {
  /**
   * Built-in rows as read for new sessions, for BUILT_IN_CACHE_TTL_MS: every session without a
   * harness of its own uses `generic`, and those rows change only when an instance with a newer
   * definition starts (`ensureBuiltIns`, which clears this instance's copy at once).
   */
  const builtInRows = new Map<string, { row: Promise<HarnessRow>; expiresAt: number }>();
  /** Inserts the built-in harnesses, or updates them where this code's definition changed. Idempotent. */
  async function ensureBuiltIns(): Promise<void> {
    builtInRows.clear();
    for (const h of BUILT_IN_HARNESSES) {
      validateCapabilityRefs(h.capabilities, capabilities);
      await store.sql(
        `insert into harnesses (id, organization_id, name, description, system_prompt, capabilities, default_model_id, max_iterations, status, created_at, updated_at)
         values (?, null, ?, ?, ?, cast(? as jsonb), null, null, 'active', now(), now())
         on conflict (id) do update set name = excluded.name, description = excluded.description,
           system_prompt = excluded.system_prompt, capabilities = excluded.capabilities, updated_at = now()
         where (harnesses.name, harnesses.description, harnesses.system_prompt, harnesses.capabilities)
           is distinct from (excluded.name, excluded.description, excluded.system_prompt, excluded.capabilities)`,
        [h.id, h.name, h.description, h.system_prompt, JSON.stringify(h.capabilities)],
      );
    }
  }

  /** 404 unknown, 403 another organisation's; built-ins are everyone's. */
  async function load(em: EntityManager, orgId: string, id: string): Promise<HarnessRow> {
    const row = (await em.findOne(Harness, { id })) as HarnessRow | null;
    if (!row) throw new NotFoundError();
    if (row.organization_id != null && row.organization_id !== orgId) throw new ForbiddenError();
    return row;
  }

  /** A custom harness of the caller's organisation; built-ins are read-only (403). */
  async function loadWritable(em: EntityManager, orgId: string, id: string): Promise<HarnessRow> {
    const row = await load(em, orgId, id);
    if (row.organization_id == null) throw new ForbiddenError();
    return row;
  }

  async function checkFields(orgId: string, input: HarnessPatchInput): Promise<void> {
    checkAgentLimits(input);
    if (input.capabilities) validateCapabilityRefs(input.capabilities, capabilities);
    const model = input.default_model_id;
    if (model && models && !(await models.exists(orgId, model.toLowerCase()))) {
      throw new NotFoundError('Not found: default_model_id is not a model of this organization');
    }
  }

  async function list(
    orgId: string,
    { include_archived = false }: { include_archived?: boolean } = {},
  ): Promise<{ data: HarnessView[]; total: number }> {
    const where = { $or: [{ organization_id: null }, { organization_id: orgId }], ...(include_archived ? {} : { status: 'active' }) };
    const rows = (await store.em().find(Harness, where as never, { orderBy: { created_at: 'asc', id: 'asc' } })) as HarnessRow[];
    const data = rows.map(toHarnessView).sort((a, b) => Number(b.is_built_in) - Number(a.is_built_in));
    return { data, total: data.length };
  }

  /** One harness visible to the organisation (archived ones too). */
  async function getHarness(orgId: string, id: string): Promise<HarnessView> {
    return toHarnessView(await load(store.em(), orgId, id));
  }

  /** `load`, with built-in rows reused for a few seconds (they are everyone's and read-only). */
  async function loadForSession(orgId: string, id: string): Promise<HarnessRow> {
    const key = id.toLowerCase();
    if (!BUILT_IN_IDS.has(key)) return load(store.em(), orgId, id);
    const now = Date.now();
    const hit = builtInRows.get(key);
    if (hit && hit.expiresAt > now) return hit.row;
    // The read itself is shared: every session created while it runs missed at the same moment
    // (at K=50 one expiry cost a dozen identical reads; issue 15).
    const row = load(store.em(), orgId, id);
    builtInRows.set(key, { row, expiresAt: now + BUILT_IN_CACHE_TTL_MS });
    row.catch(() => {
      if (builtInRows.get(key)?.row === row) builtInRows.delete(key);
    });
    return row;
  }

  /** The harness a new session may use: as `getHarness`, and 422 when archived. */
  async function getActiveHarness(orgId: string, id: string): Promise<HarnessView> {
    const harness = toHarnessView(await loadForSession(orgId, id));
    if (harness.status !== 'active') throw new UnprocessableError('Harness is archived');
    return harness;
  }

  async function create(orgId: string, input: HarnessCreateInput): Promise<HarnessView> {
    await checkFields(orgId, input);
    const em = store.em();
    const row = em.create(Harness, {
      organization_id: orgId,
      name: input.name,
      description: input.description ?? null,
      system_prompt: input.system_prompt,
      capabilities: input.capabilities ?? [],
      default_model_id: input.default_model_id?.toLowerCase() ?? null,
      max_iterations: input.max_iterations ?? null,
      status: 'active',
    } as never) as HarnessRow;
    await em.flush();
    return toHarnessView(row);
  }

  /** Only the given fields change; `capabilities` replaces the array; status never changes. */
  async function patch(orgId: string, id: string, input: HarnessPatchInput): Promise<HarnessView> {
    await checkFields(orgId, input);
    const em = store.em();
    const row = await loadWritable(em, orgId, id);
    const { status: _status, created_at: _c, updated_at: _u, ...fields } = input;
    for (const [key, value] of Object.entries(fields)) {
      if (value !== undefined)
        Object.assign(row, { [key]: key === 'default_model_id' && typeof value === 'string' ? value.toLowerCase() : value });
    }
    await em.flush();
    return toHarnessView(row);
  }

  /** DELETE archives a custom harness (idempotent); built-ins cannot be archived (403). */
  async function archive(orgId: string, id: string): Promise<void> {
    const em = store.em();
    const row = await loadWritable(em, orgId, id);
    if (row.status !== 'archived') {
      row.status = 'archived';
      await em.flush();
    }
  }

  return { ensureBuiltIns, list, getHarness, getActiveHarness, create, patch, archive };
}

export type HarnessService = ReturnType<typeof createHarnessService>;
