import type { EntityManager } from '@mikro-orm/core';
import { ConflictError } from '../../errors.js';
import { Agent, Harness, Organization } from '../../db/index.js';

/** How many rows of an organisation name one of some models as their model. */
export interface ModelReferences {
  agents: number;
  harnesses: number;
  sessions: number;
  /** True when one of the models is the organisation's default. */
  organization_default: boolean;
}

/**
 * Counts the references to `modelIds` within the organisation: agent and harness
 * `default_model_id` (archived rows included, since PATCH can still clear them), session
 * `model_id` or the defaults in a session's configuration snapshot (it keeps the agent's model
 * after the agent changes), and the organisation default.
 */
export async function findModelReferences(em: EntityManager, orgId: string, modelIds: string[]): Promise<ModelReferences> {
  if (modelIds.length === 0) return { agents: 0, harnesses: 0, sessions: 0, organization_default: false };
  const ids = { $in: modelIds };
  const [agents, harnesses, sessions, org] = await Promise.all([
    em.count(Agent, { organization_id: orgId, default_model_id: ids }),
    em.count(Harness, { organization_id: orgId, default_model_id: ids }),
    countSessions(em, orgId, modelIds),
    em.count(Organization, { id: orgId, default_model_id: ids }),
  ]);
  return { agents, harnesses, sessions, organization_default: org > 0 };
}

async function countSessions(em: EntityManager, orgId: string, modelIds: string[]): Promise<number> {
  const marks = modelIds.map(() => '?').join(', ');
  const [row] = (await em.getConnection().execute(
    `select count(*)::int as n from sessions where organization_id = ? and (model_id::text in (${marks})
       or config #>> '{agent,default_model_id}' in (${marks}) or config #>> '{harness,default_model_id}' in (${marks}))`,
    [orgId, ...modelIds, ...modelIds, ...modelIds],
    'all',
    // Inside the caller's transaction: on PGlite (one connection) a second connection would wait for it forever.
    em.getTransactionContext(),
  )) as { n: number }[];
  return Number(row?.n ?? 0);
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** Throws 409 naming what still refers to the models (counts only, no ids of other rows). */
export async function assertModelsUnreferenced(em: EntityManager, orgId: string, modelIds: string[], subject: string): Promise<void> {
  const refs = await findModelReferences(em, orgId, modelIds);
  const uses = [
    refs.agents && plural(refs.agents, 'agent'),
    refs.harnesses && plural(refs.harnesses, 'harness', 'harnesses'),
    refs.sessions && plural(refs.sessions, 'session'),
    refs.organization_default && 'the organization default',
  ].filter(Boolean);
  if (uses.length) throw new ConflictError(`${subject} is in use as the model of ${uses.join(', ')}; change those first`);
}
