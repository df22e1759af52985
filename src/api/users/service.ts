import { LockMode, UniqueConstraintViolationException, type EntityManager } from '@mikro-orm/core';
import type { UserCreateBody, UserUpdateBody } from '../../../schemas/users.js';
import type { AuthModule } from '../../auth/index.js';
import { ConflictError, UnprocessableError } from '../../errors.js';
import type { Principal } from '../../auth/index.js';
import { orgScope, User, type Store } from '../../db/index.js';
import { normalizeEmail, userView, type UserRow } from './user-view.js';

export interface UserServiceDeps {
  store: Store;
  auth: AuthModule;
}

/** Users of the caller's organisation; writes are admin-only (enforced by the routes' auth mode). */
export function createUserService({ store, auth }: UserServiceDeps) {
  async function list(principal: Principal) {
    const rows = await orgScope(store.em(), principal.org_id).find(User, {}, { orderBy: { created_at: 'asc', id: 'asc' } });
    return { data: rows.map(userView), total: rows.length };
  }

  async function get(principal: Principal, id: string) {
    return userView(await orgScope(store.em(), principal.org_id).getOwned(User, id));
  }

  async function create(principal: Principal, body: UserCreateBody) {
    const password_hash = await auth.passwords.hash(body.password);
    const em = store.em();
    const user = orgScope(em, principal.org_id).create(User, {
      email: normalizeEmail(body.email),
      name: body.name,
      role: body.role,
      operator: false,
      password_hash,
    });
    await flushUnique(em);
    return userView(user);
  }

  async function update(principal: Principal, id: string, body: UserUpdateBody) {
    const password_hash = body.password === undefined ? undefined : await auth.passwords.hash(body.password);
    let roleChanged = false;
    const user = await store.em().transactional(async (tx) => {
      const u = await orgScope(tx, principal.org_id).getOwned(User, id);
      roleChanged = body.role !== undefined && body.role !== u.role;
      if (roleChanged) await assertRoleChangeAllowed(tx, u);
      if (body.name !== undefined) u.name = body.name;
      if (body.role !== undefined) u.role = body.role;
      if (password_hash) u.password_hash = password_hash;
      return u;
    });
    // A new password ends every login of the user (refresh families and their access tokens).
    if (password_hash) await auth.refreshTokens.revokeUser(user.id, 'password_changed');
    if (password_hash || roleChanged) await auth.principals.invalidate();
    return userView(user);
  }

  async function remove(principal: Principal, id: string): Promise<void> {
    await store.em().transactional(async (tx) => {
      const u = await orgScope(tx, principal.org_id).getOwned(User, id);
      if (u.operator) throw new UnprocessableError('Cannot delete the instance operator');
      if (u.role === 'admin') await assertNotLastAdmin(tx, u);
      tx.remove(u); // API keys, token families and refresh tokens go with it (on delete cascade)
    });
    await auth.principals.invalidate();
  }

  return { list, get, create, update, remove };
}

async function assertRoleChangeAllowed(tx: EntityManager, u: UserRow): Promise<void> {
  if (u.operator) throw new UnprocessableError('Cannot change the role of the instance operator');
  if (u.role === 'admin') await assertNotLastAdmin(tx, u);
}

/** Locks the org's admins so two concurrent demotions cannot leave an organisation without one. */
async function assertNotLastAdmin(tx: EntityManager, u: UserRow): Promise<void> {
  const admins = await tx.find(User, { organization_id: u.organization_id, role: 'admin' }, { lockMode: LockMode.PESSIMISTIC_WRITE });
  if (admins.filter((a) => a.id !== u.id).length === 0) throw new UnprocessableError('An organisation needs at least one admin');
}

/** Flushes; a duplicate email becomes 409 (emails are unique across the instance). */
export async function flushUnique(em: EntityManager): Promise<void> {
  try {
    await em.flush();
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) throw new ConflictError('Email already in use');
    throw err;
  }
}

export type UserService = ReturnType<typeof createUserService>;
