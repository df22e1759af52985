import { defineEntity, p } from '@mikro-orm/core';
import { newId } from '../../ids.js';

/**
 * One entry of a session's virtual file system (table `session_files`): a file (content, type,
 * size, sha256 ETag) or a directory (`is_directory`, no content). `path` is normalised and
 * absolute under the workspace root (`/notes/plan.md`); it sorts bytewise ("C" collation).
 * Rows go with their session (on delete cascade).
 */
export const SessionFile = defineEntity({
  name: 'SessionFile',
  tableName: 'session_files',
  properties: {
    id: p
      .uuid()
      .primary()
      .onCreate(() => newId()),
    session_id: p.uuid(),
    organization_id: p.uuid(),
    path: p.text(),
    is_directory: p.boolean(),
    is_readonly: p.boolean(),
    content: p.blob().nullable(),
    content_type: p.text().nullable(),
    size_bytes: p.bigint('number'),
    sha256: p.text().nullable(),
    created_at: p.datetime().onCreate(() => new Date()),
    updated_at: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});
