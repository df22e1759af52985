import { defineEntity, p } from '@mikro-orm/core';
import { newId } from '../../ids.js';

/** A refresh token: only its SHA-256 is stored; `used_at` is set when it is rotated. */
export const RefreshToken = defineEntity({
  name: 'RefreshToken',
  tableName: 'refresh_tokens',
  properties: {
    id: p
      .uuid()
      .primary()
      .onCreate(() => newId()),
    organization_id: p.uuid().index(),
    user_id: p.uuid().index(),
    family_id: p.uuid().index(),
    token_hash: p.string().unique().hidden(),
    expires_at: p.datetime(),
    used_at: p.datetime().nullable(),
    created_at: p.datetime().onCreate(() => new Date()),
  },
});
