import type { EntityManager, EntityName, FilterQuery, FindOptions, RequiredEntityData } from '@mikro-orm/core';
import { ForbiddenError, NotFoundError } from '../errors.js';

/** Anything that belongs to an organisation. */
export interface OrgOwned {
  id: string;
  organization_id: string;
}

/**
 * The data layer's tenant boundary: every read and write made through it is filtered by, or
 * stamped with, the caller's organisation. Handlers never add the org condition themselves.
 */
export function orgScope(em: EntityManager, orgId: string) {
  return {
    em,
    orgId,
    find<T extends OrgOwned>(entity: EntityName<T>, where: FilterQuery<T> = {} as FilterQuery<T>, opts?: FindOptions<T>): Promise<T[]> {
      return em.find(entity, { $and: [where, { organization_id: orgId }] } as never, opts as never) as Promise<T[]>;
    },
    findOne<T extends OrgOwned>(entity: EntityName<T>, where: FilterQuery<T>): Promise<T | null> {
      return em.findOne(entity, { $and: [where, { organization_id: orgId }] } as never) as Promise<T | null>;
    },
    count<T extends OrgOwned>(entity: EntityName<T>, where: FilterQuery<T> = {} as FilterQuery<T>): Promise<number> {
      return em.count(entity, { $and: [where, { organization_id: orgId }] } as never);
    },
    /**
     * Loads one resource by id: 404 when it does not exist, 403 when it belongs to another
     * organisation (spec sections 5 and 7).
     */
    async getOwned<T extends OrgOwned>(entity: EntityName<T>, id: string): Promise<T> {
      const row = (await em.findOne(entity, { id } as never)) as T | null;
      if (!row) throw new NotFoundError();
      if (row.organization_id !== orgId) throw new ForbiddenError();
      return row;
    },
    create<T extends OrgOwned>(entity: EntityName<T>, data: Omit<RequiredEntityData<T>, 'organization_id'>): T {
      return em.create(entity, { ...data, organization_id: orgId } as RequiredEntityData<T>);
    },
  };
}

export type OrgScope = ReturnType<typeof orgScope>;
