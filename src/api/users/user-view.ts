import type { InferEntity } from '@mikro-orm/core';
import type { UserBody } from '../../../schemas/users.js';
import type { User } from '../../db/index.js';

export type UserRow = InferEntity<typeof User>;

/** The API shape of a user; the password hash never leaves the store. */
export function userView(u: UserRow): UserBody {
  return {
    id: u.id,
    organization_id: u.organization_id,
    email: u.email,
    name: u.name,
    role: u.role,
    operator: u.operator,
    created_at: u.created_at.toISOString(),
    updated_at: u.updated_at.toISOString(),
  } as UserBody;
}

/** Emails are unique across the instance and compared lower-cased. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
