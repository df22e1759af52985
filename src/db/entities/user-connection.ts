import { defineEntity, p } from '@mikro-orm/core';
import { newId } from '../../ids.js';

/**
 * A user's connection to an external code-hosting account: `ciphertext` seals the API key with
 * {org_id: organization_id, row_id: id, purpose: 'user_connection.api_key'}. One per (user, provider).
 */
export const UserConnection = defineEntity({
  name: 'UserConnection',
  tableName: 'user_connections',
  properties: {
    id: p
      .uuid()
      .primary()
      .onCreate(() => newId()),
    organization_id: p.uuid(),
    user_id: p.uuid(),
    provider: p.text(),
    ciphertext: p.text(),
    created_at: p.datetime().onCreate(() => new Date()),
    updated_at: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});
