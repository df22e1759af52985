import { defineEntity, p } from '@mikro-orm/core';
import { newId } from '../../ids.js';

/**
 * A session secret: `ciphertext` is an envelope (src/crypto) sealed with the associated data
 * {org_id: organization_id, row_id: id, purpose: 'session_secret.value'}. Goes with its session.
 */
export const SessionSecret = defineEntity({
  name: 'SessionSecret',
  tableName: 'session_secrets',
  properties: {
    id: p
      .uuid()
      .primary()
      .onCreate(() => newId()),
    session_id: p.uuid(),
    organization_id: p.uuid(),
    name: p.text(),
    ciphertext: p.text(),
    /** Host patterns (`api.example.com`, `*.example.org`) the value may be sent to; none by default. */
    allowed_hosts: p.json<string[]>(),
    created_at: p.datetime().onCreate(() => new Date()),
    updated_at: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});
