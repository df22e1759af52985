import { defineEntity, p } from '@mikro-orm/core';

/** A SQLite database of a session: the file's bytes per (session, name); `version` counts saves. */
export const SessionSqlDatabaseRow = defineEntity({
  name: 'SessionSqlDatabaseRow',
  tableName: 'session_sql_databases',
  properties: {
    session_id: p.uuid().primary(),
    name: p.text().primary(),
    content: p.blob(),
    size_bytes: p.bigint('number'),
    version: p.integer(),
    created_at: p.datetime().onCreate(() => new Date()),
    updated_at: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});
