import { Migration } from '@mikro-orm/migrations';

/**
 * `Idempotency-Key` records (docs/decisions/0063-idempotency-keys.md): one row per organisation
 * and key, claimed `in_flight` by the first request and holding its outcome once `done`, so a
 * retry on any instance within 24 h gets the first answer. Expired rows are purged.
 */
export class IdempotencyKeysMigration extends Migration {
  override name = '0014-idempotency-keys';

  async up(): Promise<void> {
    this.addSql(`create table idempotency_keys (
      organization_id uuid not null references organizations(id) on delete cascade,
      key text not null,
      fingerprint text not null,
      claim_id uuid not null,
      state text not null check (state in ('in_flight', 'done')),
      response_status integer null,
      response_body text null,
      response_headers text null,
      created_at timestamptz not null,
      expires_at timestamptz not null,
      primary key (organization_id, key))`);
    this.addSql(`create index idempotency_keys_expires_at on idempotency_keys (expires_at)`);
  }
}
