import { defineEntity, p } from '@mikro-orm/core';
import { newId } from '../../ids.js';

/** An API key: only its SHA-256 is stored; `prefix` is shown for recognition. */
export const ApiKey = defineEntity({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: {
    id: p
      .uuid()
      .primary()
      .onCreate(() => newId()),
    organization_id: p.uuid().index(),
    user_id: p.uuid().index(),
    name: p.string(),
    prefix: p.string(),
    key_hash: p.string().unique().hidden(),
    expires_at: p.datetime().nullable(),
    last_used_at: p.datetime().nullable(),
    revoked_at: p.datetime().nullable(),
    created_at: p.datetime().onCreate(() => new Date()),
  },
});
