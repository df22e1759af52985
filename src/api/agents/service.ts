import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { AgentCreateInput, AgentListQueryInput, AgentPatchInput, AgentPreviewInput, AgentView } from '../../../schemas/agents.js';
import type { CapabilityItemInput } from '../../../schemas/capabilities.js';
import { GENERIC_HARNESS_ID } from '../../../schemas/harnesses.js';
import { ConflictError, ForbiddenError, InvalidRequestError, NotFoundError, UnprocessableError } from '../../errors.js';
import { assertMayChange, type Actor } from '../../auth/index.js';
import { isUuid } from '../../ids.js';
import { Agent, assertOrgHasRoom, orgScope, snapshotAgent, type AgentSnapshot, type OrgScope, type Store } from '../../db/index.js';
import { buildSystemPrompt, resolveCapabilities, validateCapabilityRefs, type CapabilityRegistry } from '../../capabilities/index.js';
import { ParseLimitError, type ParsePool, type PoolTenant } from '../../offthread/index.js';
import { createClientToolChecker } from './client-tools.js';
import { clientToolsOf, reconcileModel, resolveModelReference } from './compat-aliases.js';
import { exportFileName, exportMarkdown } from './definition-format.js';
import { loadExampleCatalogue, type ExampleCatalogue } from './example-catalogue.js';
import { createImportValidator } from './import-validator.js';
import { checkAgentLimits } from './limits.js';
import type { AgentFields, AgentRow, ModelLookup } from './types.js';
import { storedAgentFields, toAgentView } from './view.js';
import { checkApprovalRules, checkCompactionSettings } from '../../turns/index.js';
import { DEFAULT_COMPACTION_THRESHOLD_PERCENT } from '../../../schemas/compaction.js';

export interface AgentServiceDeps {
  store: Store;
  capabilities: CapabilityRegistry;
  /** Checks `default_model_id` against the organisation's models; when absent any UUID is accepted. */
  models?: ModelLookup;
  /** Runs caller-fed parsers off the event loop (the app's parse pool); default: inline. */
  parse?: ParsePool['run'];
  /** The example agents `import?from-example=` knows (default: examples/agents/ of the repository). */
  examples?: ExampleCatalogue;
  /** Agents one organisation may hold (config ORG_MAX_AGENTS; default: no cap). */
  maxAgentsPerOrg?: number;
  /** The operator's COMPACTION_THRESHOLD_PERCENT: an agent's `compaction.threshold_percent` may not exceed it (default 80). */
  maxCompactionThresholdPercent?: number;
}

/** The columns `getActive` reads: ownership, status and what a session snapshots. */
const ACTIVE_AGENT_QUERY = `select id, organization_id, status, system_prompt, capabilities, client_tools, default_model_id,
  max_iterations, parallel_tool_calls, tool_approvals, compaction, xmin::text as version from agents where id = ?`;

type ActiveAgentRow = Pick<
  AgentRow,
  | 'id'
  | 'organization_id'
  | 'status'
  | 'system_prompt'
  | 'capabilities'
  | 'client_tools'
  | 'default_model_id'
  | 'max_iterations'
  | 'parallel_tool_calls'
  | 'tool_approvals'
  | 'compaction'
> & { version: string };

/**
 * An active agent as a session snapshots it. `version` is the row version (PostgreSQL's `xmin`,
 * new on every update of the row): a write guarded by it lands only while the row is unchanged.
 */
export interface ActiveAgent {
  id: string;
  organization_id: string;
  snapshot: AgentSnapshot;
  version: string;
}

/** The stored, checked fields of an agent (everything but id, organisation, status and times). */
/**
 * Agents (spec 2.1, 3.1, 4.1): CRUD, copy, import/export, preview, and `getActive` for
 * sessions. Check order on writes: size limits (400), client tool shape (400), capability
 * refs (422), tool name clashes (400), model (404).
 */
export function createAgentService({
  store,
  capabilities,
  models,
  // Without a pool (tests, tools built alone) the jobs run here; loaded at the first job, so the
  // service's start does not load the HTML converter they include (issue 13 item 7).
  parse = async (job) => (await import('../../offthread/parse-jobs.js')).runParseJob(job) as never,
  examples = loadExampleCatalogue(),
  maxAgentsPerOrg = Number.POSITIVE_INFINITY,
  maxCompactionThresholdPercent = DEFAULT_COMPACTION_THRESHOLD_PERCENT,
}: AgentServiceDeps) {
  const bounded = <T>(work: Promise<T>, what: string) =>
    work.catch((err: unknown) => {
      if (err instanceof ParseLimitError)
        throw new InvalidRequestError(`Invalid request: ${what} is too large or too complex to process (${err.message})`);
      throw err;
    });
  /** The parse pool's fair share is per organisation and, inside it, per user. */
  const tenantOf = (actor: Actor): PoolTenant => ({ org: actor.org_id, key: actor.user_id ?? '' });
  const clientToolChecker = (actor: Actor) =>
    createClientToolChecker({
      firstInvalid: (schemas) => bounded(parse({ kind: 'json-schemas', schemas }, tenantOf(actor)), 'a client tool schema'),
    });
  const validateImport = createImportValidator();

  /**
   * Limits, capabilities, client tools and model of a full set of fields; returns them normalised.
   * Models are checked only where they changed (a PATCH of another field keeps one since deleted).
   */
  async function checkFields(actor: Actor, input: AgentCreateInput, modelChanged: boolean, compactionChanged = true): Promise<AgentFields> {
    const orgId = actor.org_id;
    checkAgentLimits(input);
    // The earlier API's SDK always sends `initial_files: []`; files of an agent are not kept.
    if (input.initial_files?.length)
      throw new InvalidRequestError('Invalid request: agents keep no initial_files; give them on session create (POST /v1/sessions)');
    // The view's `harness_id`, echoed back by clients that PUT what they read; another harness is not an agent's to choose.
    if (input.harness_id !== undefined && input.harness_id.toLowerCase() !== GENERIC_HARNESS_ID)
      throw new InvalidRequestError('Invalid request: agents run on the generic harness; give harness_id on session create');
    const items: CapabilityItemInput[] = input.capabilities ?? [];
    validateCapabilityRefs(items, capabilities);
    const capabilityTools = new Set(resolveCapabilities({ agent: items }, capabilities).tools.map((t) => t.name));
    const client_tools = await clientToolChecker(actor)(clientToolsOf(input) ?? [], capabilityTools);
    let default_model_id = input.default_model_id?.toLowerCase() ?? null;
    // `model` (earlier API) names the default model by id or name; it is kept as given, for the view.
    const model = input.model ?? null;
    if (modelChanged && model !== null)
      default_model_id = reconcileModel(await resolveModelReference(models, orgId, model), default_model_id);
    else if (modelChanged && default_model_id && models && !(await models.exists(orgId, default_model_id))) {
      throw new NotFoundError('Not found: default_model_id is not a model of this organization');
    }
    return {
      name: input.name,
      description: input.description ?? null,
      system_prompt: input.system_prompt,
      default_model_id,
      tags: input.tags ?? [],
      capabilities: items,
      client_tools,
      max_iterations: input.max_iterations ?? null,
      display_name: input.display_name ?? null,
      model,
      parallel_tool_calls: input.parallel_tool_calls ?? null,
      tool_approvals: input.tool_approvals?.length ? checkApprovalRules(input.tool_approvals) : null,
      compaction: compactionChanged
        ? await checkCompactionSettings(input.compaction, {
            maxThresholdPercent: maxCompactionThresholdPercent,
            ...(models ? { modelExists: (id: string) => models.exists(orgId, id) } : {}),
          })
        : (input.compaction ?? null),
    };
  }

  function clientId(id: string): string {
    if (!isUuid(id)) throw new InvalidRequestError('Invalid request: id must be a UUID v4 or v7');
    return id.toLowerCase();
  }

  /** Every new agent (create, PUT, copy, import): counted against the organisation's cap in its insert's transaction. */
  async function insert(scope: OrgScope, actor: Actor, fields: AgentFields, id?: string): Promise<AgentRow> {
    try {
      return await scope.em.transactional(async (tx) => {
        await assertOrgHasRoom(tx, 'agents', scope.orgId, maxAgentsPerOrg);
        return orgScope(tx, scope.orgId).create(Agent, {
          ...fields,
          ...(id ? { id } : {}),
          status: 'active',
          created_by: actor.user_id ?? null,
        } as never) as AgentRow;
      });
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException)
        throw new ConflictError('An agent with this id already exists', { cause: err });
      throw err;
    }
  }

  async function create(actor: Actor, input: AgentCreateInput): Promise<AgentView> {
    const id = input.id === undefined ? undefined : clientId(input.id);
    const fields = await checkFields(actor, input, true);
    return toAgentView(await insert(orgScope(store.em(), actor.org_id), actor, fields, id));
  }

  async function list(
    orgId: string,
    { include_archived = false, tag = [], search }: AgentListQueryInput,
  ): Promise<{ data: AgentView[]; total: number }> {
    const scope = orgScope(store.em(), orgId);
    const rows = (await scope.find(Agent, include_archived ? {} : { status: 'active' }, {
      orderBy: { created_at: 'asc', id: 'asc' },
    })) as AgentRow[];
    const data = rows.filter((r) => tag.every((t) => (r.tags ?? []).includes(t)) && matchesSearch(r, search)).map(toAgentView);
    return { data, total: data.length };
  }

  async function get(orgId: string, id: string): Promise<AgentView> {
    return toAgentView((await orgScope(store.em(), orgId).getOwned(Agent, id)) as AgentRow);
  }

  /** PATCH: only the given fields change; `capabilities` replaces the array; status never changes. */
  async function patch(actor: Actor, id: string, input: AgentPatchInput): Promise<AgentView> {
    checkAgentLimits(input);
    if (input.id !== undefined && input.id.toLowerCase() !== id.toLowerCase())
      throw new InvalidRequestError('Invalid request: body.id does not match the path');
    const orgId = actor.org_id;
    const scope = orgScope(store.em(), orgId);
    const row = (await scope.getOwned(Agent, id)) as AgentRow;
    assertMayChange(actor, row.created_by);
    const given = withoutReadOnly(input);
    const merged: AgentCreateInput = { ...storedAgentFields(row), ...given };
    // An alias replaces what its counterpart held: a new default model clears the reference to the old one.
    if (given.default_model_id !== undefined && given.model === undefined) merged.model = null;
    if (given.model !== undefined && given.default_model_id === undefined) delete merged.default_model_id;
    if (given.tools !== undefined && given.client_tools === undefined) delete merged.client_tools;
    const modelChanged = given.default_model_id !== undefined || given.model !== undefined;
    Object.assign(row, await checkFields(actor, merged, modelChanged, given.compaction !== undefined));
    await scope.em.flush();
    return toAgentView(row);
  }

  /** PUT: creates the agent under the client's id (created: true) or replaces every field but status. */
  async function put(actor: Actor, rawId: string, input: AgentCreateInput): Promise<{ created: boolean; agent: AgentView }> {
    const id = clientId(rawId);
    if (input.id !== undefined && input.id.toLowerCase() !== id)
      throw new InvalidRequestError('Invalid request: body.id does not match the path');
    const fields = await checkFields(actor, input, true);
    const scope = orgScope(store.em(), actor.org_id);
    const existing = (await scope.em.findOne(Agent, { id })) as AgentRow | null;
    if (!existing) return { created: true, agent: toAgentView(await insert(scope, actor, fields, id)) };
    const row = (await scope.getOwned(Agent, id)) as AgentRow;
    assertMayChange(actor, row.created_by);
    Object.assign(row, fields);
    await scope.em.flush();
    return { created: false, agent: toAgentView(row) };
  }

  /** DELETE: archives (idempotent); the agent stays readable. */
  async function archive(actor: Actor, id: string): Promise<void> {
    const scope = orgScope(store.em(), actor.org_id);
    const row = (await scope.getOwned(Agent, id)) as AgentRow;
    assertMayChange(actor, row.created_by);
    if (row.status !== 'archived') {
      row.status = 'archived';
      await scope.em.flush();
    }
  }

  /** A new active agent with a new id and every field of the original; named `<name> (copy)`. */
  async function copy(actor: Actor, id: string): Promise<AgentView> {
    const scope = orgScope(store.em(), actor.org_id);
    const src = (await scope.getOwned(Agent, id)) as AgentRow;
    const name = `${src.name} (copy)`;
    checkAgentLimits({ name });
    return toAgentView(await insert(scope, actor, { ...storedAgentFields(src), name }));
  }

  /** POST import: Markdown with YAML front matter, YAML or JSON; always a new agent. */
  async function importDefinition(actor: Actor, raw: Buffer, contentType: string | undefined): Promise<AgentView> {
    const job = { kind: 'agent-definition', raw: new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength), contentType } as const;
    const { format, doc } = await bounded(parse(job, tenantOf(actor)), 'the agent definition');
    const { id: _id, ...definition } = doc;
    checkAgentLimits(definition);
    return create(actor, validateImport(format, definition));
  }

  /** `import?from-example=<name>`: a shipped example, imported like an uploaded file; 404 for an unknown name. */
  async function importExample(actor: Actor, name: string): Promise<AgentView> {
    const example = examples.get(name);
    if (!example) throw new NotFoundError('Not found: unknown example agent');
    return importDefinition(actor, example.definition, 'text/markdown');
  }

  /** The catalogue, for GET /v1/agent-examples. */
  function listExamples(): { data: { name: string; agent_name: string; description: string; tags: string[] }[]; total: number } {
    const data = [...examples.values()].map(({ name, agent_name, description, tags }) => ({ name, agent_name, description, tags }));
    return { data, total: data.length };
  }

  async function exportDefinition(orgId: string, id: string): Promise<{ fileName: string; markdown: string }> {
    const agent = await get(orgId, id);
    return { fileName: exportFileName(agent.name), markdown: exportMarkdown(agent) };
  }

  /** The runtime prompt and tools of a would-be agent; nothing is stored. */
  async function preview(
    actor: Actor,
    input: AgentPreviewInput,
  ): Promise<{ system_prompt: string; tools: { name: string; description: string; parameters: Record<string, unknown> }[] }> {
    checkAgentLimits(input);
    const items = input.capabilities ?? [];
    validateCapabilityRefs(items, capabilities);
    const resolved = resolveCapabilities({ agent: items }, capabilities);
    const clientTools = await clientToolChecker(actor)(input.client_tools ?? [], new Set(resolved.tools.map((t) => t.name)));
    const tools = [...resolved.tools, ...clientTools].map((t) => ({
      name: t.name,
      description: t.description,
      parameters: { ...t.parameters },
    }));
    return { system_prompt: buildSystemPrompt(input.system_prompt, resolved), tools };
  }

  /**
   * The agent a session may use (spec 3.1): 404 unknown, 403 another organisation's,
   * 422 when archived.
   */
  /**
   * What a session snapshots of an active agent (spec 3.4): 404 unknown, 403 another
   * organisation's, 422 archived. One raw select of the snapshot's columns instead of an ORM
   * entity load: it runs on every session create (issue 15).
   */
  async function getActive(orgId: string, id: string): Promise<ActiveAgent> {
    const [row] = await store.sql<ActiveAgentRow>(ACTIVE_AGENT_QUERY, [id]);
    if (!row) throw new NotFoundError();
    if (row.organization_id !== orgId) throw new ForbiddenError();
    if (row.status !== 'active') throw new UnprocessableError('Agent is archived');
    return { id: row.id, organization_id: row.organization_id, snapshot: snapshotAgent(row), version: row.version };
  }

  return {
    create,
    list,
    get,
    patch,
    put,
    archive,
    copy,
    importDefinition,
    importExample,
    listExamples,
    exportDefinition,
    preview,
    getActive,
    /** Client tools checked as an agent's are (schemas compiled in the actor's share of the parse pool); sessions declare their own with it. */
    checkClientTools: (actor: Actor, ...args: Parameters<ReturnType<typeof clientToolChecker>>) => clientToolChecker(actor)(...args),
  };
}

export type AgentService = ReturnType<typeof createAgentService>;

/** `?search=`: a case-insensitive substring of the name or the description; empty matches all. */
function matchesSearch(row: { name: string; description?: string | null }, search: string | undefined): boolean {
  if (!search) return true;
  const needle = search.toLowerCase();
  return row.name.toLowerCase().includes(needle) || (row.description ?? '').toLowerCase().includes(needle);
}

/** Response-only fields a client may echo back; never written. */
function withoutReadOnly<T extends { id?: unknown; status?: unknown; created_at?: unknown; updated_at?: unknown }>(input: T) {
  const { id: _id, status: _status, created_at: _c, updated_at: _u, ...rest } = input;
  return Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)) as Omit<
    T,
    'id' | 'status' | 'created_at' | 'updated_at'
  >;
}
