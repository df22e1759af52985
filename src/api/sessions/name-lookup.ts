/**
 * `harness_name` / `agent_name` on session create (earlier public API;
 * docs/decisions/0044-earlier-api-aliases.md): the harness or agent of that exact name in the
 * caller's organisation (harnesses: built-ins too). Names are not unique, so a name several
 * active ones carry is a 409 asking for the id; none → 404. A name only archived ones carry
 * gives one of them, so the session setup answers 422 as it does for an archived id.
 */
import { ConflictError, InvalidRequestError, NotFoundError } from '../../errors.js';
import type { Store } from '../../db/index.js';

type Kind = 'agent' | 'harness';

const QUERIES: Record<Kind, string> = {
  agent: `select id, status from agents where organization_id = ? and name = ? order by created_at, id limit 50`,
  harness: `select id, status from harnesses where (organization_id = ? or organization_id is null) and name = ? order by created_at, id limit 50`,
};

/** The id of the one active `kind` named `name` (see above for the other cases). */
export async function idByName(store: Store, orgId: string, kind: Kind, name: string): Promise<string> {
  const rows = await store.sql<{ id: string; status: string }>(QUERIES[kind], [orgId, name]);
  const active = rows.filter((r) => r.status === 'active');
  if (active.length === 1) return active[0]!.id;
  if (active.length > 1) {
    throw new ConflictError(
      `${kind === 'agent' ? 'Agent' : 'Harness'} name ${JSON.stringify(name)} is ambiguous: ${active.length} ${kind === 'agent' ? 'agents' : 'harnesses'} of this organization carry it; give ${kind}_id instead`,
    );
  }
  if (rows.length) return rows[0]!.id;
  throw new NotFoundError(`Not found: no ${kind} named ${JSON.stringify(name)}`);
}

/** `*_id` from `*_id` or `*_name`; both given → 400 (which one would win is a guess). */
export async function resolveNamed(
  store: Store,
  orgId: string,
  kind: Kind,
  id: string | undefined,
  name: string | undefined,
): Promise<string | undefined> {
  if (name === undefined) return id;
  if (id !== undefined) throw new InvalidRequestError(`Invalid request: give ${kind}_id or ${kind}_name, not both`);
  return idByName(store, orgId, kind, name);
}
