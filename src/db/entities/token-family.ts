import { defineEntity, p } from '@mikro-orm/core';
import { newId } from '../../ids.js';

/**
 * One login: every refresh token rotated from it, and every access token issued with it,
 * belongs to this family. Revoking the family (logout, reuse of a rotated token) ends them all.
 */
export const TokenFamily = defineEntity({
  name: 'TokenFamily',
  tableName: 'token_families',
  properties: {
    id: p
      .uuid()
      .primary()
      .onCreate(() => newId()),
    organization_id: p.uuid().index(),
    user_id: p.uuid().index(),
    created_at: p.datetime().onCreate(() => new Date()),
    revoked_at: p.datetime().nullable(),
    revoke_reason: p.string().nullable(),
  },
});
