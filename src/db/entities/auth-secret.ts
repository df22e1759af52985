import { defineEntity, p } from '@mikro-orm/core';

/** Instance-wide secrets generated once and shared by every instance (e.g. the JWT signing key). */
export const AuthSecret = defineEntity({
  name: 'AuthSecret',
  tableName: 'auth_secrets',
  properties: {
    name: p.string().primary(),
    value: p.string().hidden(),
    created_at: p.datetime().onCreate(() => new Date()),
  },
});
