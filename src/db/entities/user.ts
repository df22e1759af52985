import { defineEntity, p } from '@mikro-orm/core';
import { newId } from '../../ids.js';

/** A user belongs to one organisation with a role; `operator` marks the instance operator. */
export const User = defineEntity({
  name: 'User',
  tableName: 'users',
  properties: {
    id: p
      .uuid()
      .primary()
      .onCreate(() => newId()),
    organization_id: p.uuid().index(),
    email: p.string().unique(),
    name: p.string(),
    password_hash: p.string().nullable().hidden(),
    role: p.enum(['admin', 'member'] as const),
    operator: p.boolean().default(false),
    created_at: p.datetime().onCreate(() => new Date()),
    updated_at: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});
