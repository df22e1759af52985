import type { InferEntity } from '@mikro-orm/core';
import type { OrganizationBody, OrganizationCreateBody } from '../../../schemas/orgs.js';
import type { AuthModule } from '../../auth/index.js';
import type { Principal } from '../../auth/index.js';
import { Organization, User, type Store } from '../../db/index.js';
import { flushUnique, normalizeEmail, userView } from '../users/index.js';

export function orgView(o: InferEntity<typeof Organization>): OrganizationBody {
  return { id: o.id, name: o.name, created_at: o.created_at.toISOString(), updated_at: o.updated_at.toISOString() };
}

/** Organisations: the operator creates them with their first admin and sees all; others see their own. */
export function createOrgService({ store, auth }: { store: Store; auth: AuthModule }) {
  async function create(body: OrganizationCreateBody) {
    const password_hash = await auth.passwords.hash(body.admin.password);
    const em = store.em();
    return em.transactional(async (tx) => {
      const org = tx.create(Organization, { name: body.name });
      await tx.flush(); // no declared relations: the parent row must be inserted first
      const admin = tx.create(User, {
        organization_id: org.id,
        email: normalizeEmail(body.admin.email),
        name: body.admin.name,
        role: 'admin',
        operator: false,
        password_hash,
      });
      await flushUnique(tx);
      return { organization: orgView(org), admin: userView(admin) };
    });
  }

  async function list(principal: Principal) {
    const em = store.em();
    // The operator's view is instance-wide by definition; everyone else sees the own organisation.
    const where = principal.operator ? {} : { id: principal.org_id };
    const rows = await em.find(Organization, where, { orderBy: { created_at: 'asc', id: 'asc' } });
    return { data: rows.map(orgView), total: rows.length };
  }

  return { create, list };
}

export type OrgService = ReturnType<typeof createOrgService>;
