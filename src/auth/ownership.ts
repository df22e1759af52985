import { ForbiddenError, NotFoundError } from '../errors.js';
import type { Principal } from '../http/route.js';

/**
 * The ownership half of the member/admin matrix (docs/decisions.md, "Roles: the member/admin
 * matrix"); the role half is each route's `auth` mode. Declared once here, used by every
 * service that loads an owned row, and read by the authorization matrix test.
 */

/**
 * Who acts. HTTP callers always carry `user_id` and `role`; a component acting for an
 * organisation (the scheduler firing a session's own schedule) carries neither and is held
 * only to the organisation boundary.
 */
export type Actor = Pick<Principal, 'org_id'> & Partial<Pick<Principal, 'user_id' | 'role'>>;

/** What members may do with rows other users of their organisation created. */
export const MEMBER_OWNERSHIP_RULES = {
  /** Agents: everyone reads, uses and copies them; only the creator or an admin changes or archives one. */
  agents: 'change_own',
  /** Sessions (with their events, messages, files, storage, images and stream tokens): only the creator or an admin, read or write. */
  sessions: 'own_only',
} as const;

/** True when `actor` is a member acting on a row someone else created (or nobody: rows from before creators were recorded count as the admins'). */
function isOthers(actor: Actor, createdBy: string | null | undefined): boolean {
  return actor.role === 'member' && createdBy !== actor.user_id;
}

/** Agents: 403 when a member changes, replaces or archives an agent another user (or an admin before 0012) created. */
export function assertMayChangeAgent(actor: Actor, row: { created_by?: string | null }): void {
  if (isOthers(actor, row.created_by)) throw new ForbiddenError();
}

/**
 * Sessions: 404 unknown, 403 another organisation's, 403 another user's for a member. Every
 * route under `/v1/sessions/{id}` and every image of a session goes through this.
 */
export function assertSessionAccess(actor: Actor, row: { organization_id: string; user_id: string } | null | undefined): void {
  if (!row) throw new NotFoundError();
  if (row.organization_id !== actor.org_id) throw new ForbiddenError();
  if (isOthers(actor, row.user_id)) throw new ForbiddenError();
}

/** The listing filter for sessions: members see their own, admins the organisation's. */
export function sessionListOwner(actor: Actor): string | undefined {
  return actor.role === 'member' ? actor.user_id : undefined;
}
