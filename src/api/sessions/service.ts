import { checkApprovalRules, createMessageQueue, ZERO_USAGE } from '../../turns/index.js';
import type { NewTypedEvent, SessionEvent } from '../../../schemas/events.js';
import type { Bus } from '../../bus/index.js';
import { assertSessionAccess, sessionListOwner } from '../../auth/index.js';
import { ConflictError, InvalidRequestError } from '../../errors.js';
import { newId } from '../../ids.js';
import type { Principal, SessionOwners } from '../../auth/index.js';
import type { Logger } from '../../log.js';
import type { SessionAdditions, SessionConfig, Store } from '../../db/index.js';
import type { ToolApprovalRuleInput } from '../../../schemas/approvals.js';
import { Session, orgCountUpsert, orgLimitError, orgScope, preparedSql, type OrgScope } from '../../db/index.js';
import type { SqlEntityManager } from '@mikro-orm/sql';
import type { CreateSessionInput, UpdateSessionInput } from '../../../schemas/sessions.js';
import type { CompactionSettingsInput } from '../../../schemas/compaction.js';
import { clientToolsOf } from '../agents/index.js';
import type { InitialFileInput } from '../../../schemas/fs.js';
import { decodeStarterFiles, starterFileLimit, withFileSystem, type StarterFile } from './initial-files.js';
import { resolveNamed } from './name-lookup.js';
import type { SessionSetup, SessionSetupInput, SessionSetupResolver } from './session-setup.js';
import { sessionView } from './session-view.js';
import { existingChildOrRoom, linkColumns, type SessionLink } from './child-link.js';

export interface SessionServiceDeps {
  store: Store;
  bus: Bus<SessionEvent>;
  log: Logger;
  setup: SessionSetupResolver;
  /** Turns the user's connections into session secrets `connection:<provider>` (spec 2.3); src/session-storage. */
  /** This instance's known session owners: filled on create, forgotten on delete (SSE opens read it). */
  owners?: SessionOwners;
  connections?: { injectConnections(session: { id: string; organization_id: string; user_id: string }): Promise<number> };
  /** Writes `initial_files` into a new session's file system (src/session-storage), within its quota. */
  starterFiles: {
    fsQuotaBytes: number;
    writeStarterFiles(session: { id: string; organization_id: string }, files: readonly StarterFile[]): Promise<void>;
  };
  /** Sessions one organisation may hold (config ORG_MAX_SESSIONS; default: no cap). */
  maxSessionsPerOrg?: number;
}

/**
 * A new session row, in one statement (its own transaction): the organisation's cap (its count
 * row stays locked until commit, org-caps.ts) and, with an agent, the guard that writes the row
 * only while the agent is active and still the version its snapshot was taken from. `full`: the
 * cap refused it; `inserted` false otherwise: the agent changed, read it again. `connected`: the
 * user holds connections for `injectConnections` to copy in (most have none).
 */
const INSERT_SESSION = preparedSql(
  'sessions.insert',
  `with cap as (${orgCountUpsert('sessions')}), ins as (
  insert into sessions (id, organization_id, user_id, harness_id, agent_id, title, tags, model_id, capabilities, features, config, status, usage, current_turn_id, chat_user_id, created_at, updated_at,
    parent_session_id, parent_tool_call_id, parent_turn_id, subagent_depth, max_iterations)
  select ?::uuid, ?::uuid, ?::uuid, ?::uuid, ?::uuid, ?::text, ?::jsonb, ?::uuid, ?::jsonb, ?::jsonb, ?::jsonb, 'started', ?::jsonb, null, null, ?::timestamptz, ?::timestamptz,
    ?::uuid, ?::text, ?::uuid, ?::integer, ?::integer
  where (select n from cap) < ?::bigint and (?::text is null or exists (select 1 from agents where id = ? and status = 'active' and xmin::text = ?::text))
  returning id
)
select exists (select 1 from ins) as inserted, (select n from cap) >= ?::bigint as full,
  exists (select 1 from user_connections where user_id = ? and organization_id = ?) as connected`,
);

interface InsertedSession {
  inserted: boolean;
  full: boolean;
  connected: boolean;
}

/** Attempts at a guarded insert before giving up on an agent that keeps changing. */
const GUARDED_INSERT_ATTEMPTS = 3;

/** Session lifecycle: create (with `session.created`), list, read, update, permanent delete, chat singleton. */
export function createSessionService({
  store,
  bus,
  log,
  setup,
  owners,
  connections,
  starterFiles,
  maxSessionsPerOrg = Number.POSITIVE_INFINITY,
}: SessionServiceDeps) {
  // Only its counts: each session view carries the number of messages waiting for a turn.
  const queue = createMessageQueue(store);

  /** `link`: a sub-agent's child session (child-link.ts); the child a redelivered call made before is returned as is. */
  async function create(principal: Principal, input: CreateSessionInput, link?: SessionLink) {
    const harness_id = await resolveNamed(store, principal.org_id, 'harness', input.harness_id, input.harness_name);
    const agent_id = await resolveNamed(store, principal.org_id, 'agent', input.agent_id, input.agent_name);
    if (!harness_id && !agent_id) throw new InvalidRequestError('Invalid request: harness_id or agent_id is required');
    const setupInput = {
      ...(harness_id ? { harness_id } : {}),
      agent_id: agent_id ?? null,
      capabilities: input.capabilities,
      model_id: input.model_id,
      additions: sessionAdditions(input),
      guarded: true,
    } as SessionSetupInput;
    const starter = input.initial_files?.length ? (input.initial_files as InitialFileInput[]) : null;
    for (let attempt = 1; ; attempt++) {
      let resolved = await setup.resolve(principal, setupInput);
      if (starter && !resolved.features.includes('file_system'))
        resolved = await setup.resolve(principal, { ...setupInput, capabilities: withFileSystem(setupInput.capabilities) });
      // Checked before the insert: bad starter files leave nothing behind.
      const files = starter
        ? decodeStarterFiles(starter, { maxFileBytes: starterFileLimit(resolved), quotaBytes: starterFiles.fsQuotaBytes })
        : [];
      const created = await insertSession(principal, input, resolved, link);
      if (created && files.length) await starterFiles.writeStarterFiles(created, files);
      if (created) return created;
      // The agent changed (or was archived) after the resolver last read it: read it again.
      setup.forgetAgent(agent_id!);
      if (attempt >= GUARDED_INSERT_ATTEMPTS) throw new ConflictError('Agent changed while the session was created; retry');
    }
  }

  /** Inserts the session; null when the agent guard refused it (see INSERT_SESSION). */
  async function insertSession(principal: Principal, input: CreateSessionInput, setupResult: SessionSetup, link?: SessionLink) {
    const { agent_version, ...resolved } = setupResult;
    const now = new Date();
    const row = {
      id: newId(),
      organization_id: principal.org_id,
      user_id: principal.user_id,
      ...resolved,
      title: input.title ?? null,
      tags: input.tags ?? [],
      status: 'started',
      parent_session_id: link?.parent_session_id ?? null,
      parent_tool_call_id: link?.parent_tool_call_id ?? null,
      created_at: now,
      updated_at: now,
    };
    const max = Number.isFinite(maxSessionsPerOrg) ? maxSessionsPerOrg : Number.MAX_SAFE_INTEGER;
    const params = [
      row.organization_id,
      row.id,
      row.organization_id,
      row.user_id,
      row.harness_id,
      row.agent_id,
      row.title,
      JSON.stringify(row.tags),
      row.model_id,
      JSON.stringify(row.capabilities),
      JSON.stringify(row.features),
      JSON.stringify(row.config),
      JSON.stringify(ZERO_USAGE),
      now,
      now,
      ...linkColumns(link),
      max,
      agent_version ?? null,
      row.agent_id,
      agent_version ?? null,
      max,
      row.user_id,
      row.organization_id,
    ];
    // A child session is checked under its parent's lock first (child-link.ts), in one transaction with the insert.
    const [inserted, existing] = link
      ? await store.em().transactional(async (tx) => {
          const found = await existingChildOrRoom(tx, link);
          if (found) return [undefined, found] as const;
          const rows = await (tx as unknown as SqlEntityManager).execute<InsertedSession[]>(INSERT_SESSION.text, params);
          return [rows[0], null] as const;
        })
      : [(await store.sql<InsertedSession>(INSERT_SESSION, params))[0], null];
    if (inserted?.full) throw orgLimitError('sessions', max);
    if (existing) return sessionView(await store.em().findOneOrFail(Session, { id: existing }), await queue.countInSession(existing));
    if (!inserted?.inserted) return null;
    owners?.remember(row.id, row);
    if (inserted.connected) await connections?.injectConnections(row);
    await emitCreated(row.id, row.harness_id, row.agent_id ?? null);
    return sessionView(row, 0);
  }

  async function emitCreated(sessionId: string, harnessId: string, agentId: string | null): Promise<void> {
    // expectedSequence 0: a second `session.created` for the same session can never be written.
    const created: NewTypedEvent<'session.created'> = { type: 'session.created', data: { harness_id: harnessId, agent_id: agentId } };
    await bus.events.append(sessionId, [created], { expectedSequence: 0 });
  }

  /** The session row: 404 unknown, 403 another organisation's or (for a member) another user's. */
  async function owned(scope: OrgScope, principal: Principal, id: string, withConfig = false) {
    // The configuration is a lazy column: read in the same query when the reply shows its rules.
    const row = await scope.em.findOne(Session, { id }, withConfig ? { populate: ['config'] } : {});
    assertSessionAccess(principal, row);
    return row!;
  }

  /** Admins list the organisation's sessions, members their own. */
  async function list(principal: Principal, { offset, limit, agent_id }: { offset: number; limit: number; agent_id?: string }) {
    const scope = orgScope(store.em(), principal.org_id);
    const owner = sessionListOwner(principal);
    const where = { ...(agent_id ? { agent_id } : {}), ...(owner ? { user_id: owner } : {}) };
    const [rows, total] = await Promise.all([
      scope.find(Session, where, { offset, limit, orderBy: { created_at: 'desc', id: 'desc' } }),
      scope.count(Session, where),
    ]);
    const queued = await queue.countsBySession(rows.map((r) => r.id));
    return { data: rows.map((r) => sessionView(r, queued.get(r.id) ?? 0)), total, offset, limit };
  }

  async function get(principal: Principal, id: string) {
    // The count runs beside the access check (one round trip); a refused read discards it.
    const [row, queued] = await Promise.all([owned(orgScope(store.em(), principal.org_id), principal, id, true), queue.countInSession(id)]);
    return sessionView(row, queued);
  }

  /** PATCH `compaction`: the session's own settings in its configuration copy, read by its next turn; null removes them. */
  async function setCompaction(
    scope: OrgScope,
    principal: Principal,
    row: Awaited<ReturnType<typeof owned>>,
    input: CompactionSettingsInput | null,
  ): Promise<void> {
    const compaction = await setup.checkCompaction(principal, input);
    await scope.em.populate(row, ['config']);
    if (!row.config) throw new ConflictError('The session has no configuration copy yet; retry after its first turn');
    const { compaction: _previous, ...others } = row.config.session ?? {};
    const session: SessionAdditions = compaction ? { ...others, compaction } : others;
    const { harness, agent } = row.config;
    row.config = Object.keys(session).length ? { harness, agent, session } : { harness, agent };
  }

  async function update(principal: Principal, id: string, input: UpdateSessionInput) {
    const scope = orgScope(store.em(), principal.org_id);
    const row = await owned(scope, principal, id, true);
    const switching = input.agent_id !== undefined && input.agent_id !== row.agent_id;
    // New rules go into the snapshot's session part; a row without one (pre-0010) gets it now.
    if (switching || (input.tool_approvals !== undefined && !row.config)) {
      const additions = row.config?.session;
      // The new agent must exist and be active; its configuration is snapshotted now and used from
      // the next turn on. The harness snapshot and the session additions stay (spec 3.4 rule 2).
      const resolved = await setup.resolve(principal, {
        harness_id: row.harness_id,
        harness_snapshot: row.config?.harness,
        agent_id: input.agent_id ?? row.agent_id ?? null,
        capabilities: row.capabilities,
        model_id: row.model_id,
        ...(additions ? { additions } : {}),
      });
      row.agent_id = resolved.agent_id;
      row.features = resolved.features;
      row.config = resolved.config;
    }
    if (input.tool_approvals !== undefined) row.config = withSessionRules(row.config!, input.tool_approvals);
    if (input.compaction !== undefined) await setCompaction(scope, principal, row, input.compaction);
    if (input.title !== undefined) row.title = input.title;
    if (input.tags !== undefined) row.tags = input.tags;
    await scope.em.flush();
    return sessionView(row, await queue.countInSession(id));
  }

  /** Permanent: the row (and, by cascade, files, kv, secrets, images), the events and any queued turn. */
  async function remove(principal: Principal, id: string): Promise<void> {
    const scope = orgScope(store.em(), principal.org_id);
    const row = await owned(scope, principal, id);
    await scope.em.remove(row).flush();
    owners?.forget(id);
    await bus.turns.remove(id);
    await bus.events.purge(id);
    await bus.signals.send({ type: 'deleted', session_id: id });
    log.info({ sessionId: id }, 'session deleted');
  }

  /** The caller's global chat session; concurrent calls create exactly one (unique chat_user_id). */
  async function chat(principal: Principal) {
    const em = store.em();
    const existing = await em.findOne(Session, { chat_user_id: principal.user_id });
    if (existing) return sessionView(existing, await queue.countInSession(existing.id));
    const resolved = await setup.resolve(principal, { harness_id: setup.chatHarnessId });
    const now = new Date();
    const inserted = await store.sql<{ id: string }>(
      `insert into sessions (id, organization_id, user_id, harness_id, agent_id, title, tags, model_id, capabilities, features, config, status, usage, chat_user_id, created_at, updated_at)
       values (?, ?, ?, ?, null, ?, ?, ?, ?, ?, ?, 'started', ?, ?, ?, ?) on conflict (chat_user_id) do nothing returning id`,
      [
        newId(),
        principal.org_id,
        principal.user_id,
        resolved.harness_id,
        'Chat',
        JSON.stringify(['global-chat', `user:${principal.user_id}`]),
        resolved.model_id,
        JSON.stringify(resolved.capabilities),
        JSON.stringify(resolved.features),
        JSON.stringify(resolved.config),
        JSON.stringify(ZERO_USAGE),
        principal.user_id,
        now,
        now,
      ],
    );
    const row = await store.em().findOneOrFail(Session, { chat_user_id: principal.user_id });
    if (inserted.length) {
      await connections?.injectConnections(row);
      await emitCreated(row.id, row.harness_id, null);
    }
    return sessionView(row, inserted.length ? 0 : await queue.countInSession(row.id));
  }

  return { create, list, get, update, remove, chat };
}

export type SessionService = ReturnType<typeof createSessionService>;

/** The configuration with the session's own approval rules replaced (checked as at create; `[]`: removed). */
function withSessionRules(config: SessionConfig, rules: ToolApprovalRuleInput[]): SessionConfig {
  const { tool_approvals: _replaced, ...kept } = config.session ?? {};
  const session: SessionAdditions = rules.length ? { ...kept, tool_approvals: checkApprovalRules(rules) } : kept;
  const { session: _old, ...layers } = config;
  return Object.keys(session).length ? { ...layers, session } : layers;
}

/** The earlier public API's session-level fields, kept in the session's configuration copy. */
function sessionAdditions(input: CreateSessionInput): SessionAdditions | undefined {
  const additions: SessionAdditions = {};
  const tools = clientToolsOf(input as Parameters<typeof clientToolsOf>[0]);
  if (tools?.length) additions.client_tools = tools;
  if (input.parallel_tool_calls != null) additions.parallel_tool_calls = input.parallel_tool_calls;
  if (input.tool_approvals?.length) additions.tool_approvals = input.tool_approvals;
  if (input.compaction) additions.compaction = input.compaction;
  if (input.locale != null) additions.locale = input.locale;
  return Object.keys(additions).length ? additions : undefined;
}
