import { ForbiddenError, NotFoundError } from '../errors.js';
import type { Principal } from './principal.js';

/**
 * The ownership half of the member/admin matrix
 * (docs/decisions/0018-member-admin-matrix.md); the role half is each route's `auth` mode. Declared once here, used by every
 * service that loads an owned row, and read by the authorization matrix test.
 */

/**
 * Who acts. HTTP callers always carry `user_id` and `role`; a component acting for an
 * organisation (the scheduler firing a session's own schedule) carries neither and is held
 * only to the organisation boundary.
 */
export type Actor = Pick<Principal, 'org_id'> & Partial<Pick<Principal, 'user_id' | 'role'>>;

/**
 * `change_own`: every member reads (and copies or uses) the row; PATCH, PUT and DELETE need
 * its creator or an admin. `own_only`: every route that addresses the row needs its creator
 * or an admin. Keyed by collection path; collections not listed belong to the organisation
 * and follow the route's `auth` mode alone.
 */
export type OwnershipRule = 'change_own' | 'own_only';

/** What members may do with rows other users of their organisation created (the test reads this). */
export const MEMBER_OWNERSHIP_RULES: Readonly<Record<string, OwnershipRule>> = {
  /** Everyone reads, uses and copies agents; only the creator or an admin changes or archives one. */
  '/v1/agents': 'change_own',
  /** Members revoke their own keys only. */
  '/v1/auth/api-keys': 'change_own',
  /** A session with its events, messages, stream, files, storage and stream tokens: creator or admin only. */
  '/v1/sessions': 'own_only',
  /** An image is its session's. */
  '/v1/images': 'own_only',
};

/** True when `actor` is a member acting on a row someone else created (or nobody: rows from before creators were recorded count as the admins'). */
function isOthers(actor: Actor, createdBy: string | null | undefined): boolean {
  return actor.role === 'member' && createdBy !== actor.user_id;
}

/**
 * `change_own` rows (agents, API keys): 403 when a member changes, replaces, archives or
 * revokes one another user created (agents from before 0012 have no creator: the admins').
 */
export function assertMayChange(actor: Actor, createdBy: string | null | undefined): void {
  if (isOthers(actor, createdBy)) throw new ForbiddenError();
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
