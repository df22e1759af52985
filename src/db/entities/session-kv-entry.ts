import { defineEntity, p } from '@mikro-orm/core';

/** A key/value entry of a session (`session_storage`); goes with its session. */
export const SessionKvEntry = defineEntity({
  name: 'SessionKvEntry',
  tableName: 'session_kv',
  properties: {
    session_id: p.uuid().primary(),
    key: p.text().primary(),
    value: p.text(),
    created_at: p.datetime().onCreate(() => new Date()),
    updated_at: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
});
