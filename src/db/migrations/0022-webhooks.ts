import { Migration } from '@mikro-orm/migrations';

/**
 * Signed webhooks (issue 28 item 2; docs/decisions/0095-webhooks.md): an organisation's endpoints,
 * the delivery outbox written when a matching event is appended, and each attempt's record.
 */
export class WebhooksMigration extends Migration {
  override name = '0022-webhooks';

  async up(): Promise<void> {
    this.addSql(`create table webhook_endpoints (
      id uuid primary key,
      organization_id uuid not null references organizations(id) on delete cascade,
      url text not null,
      description text not null default '',
      event_types jsonb not null,
      filter jsonb not null default '{}',
      status text not null default 'active',
      disabled_reason text null,
      disabled_at timestamptz null,
      secret_encrypted text not null,
      previous_secret_encrypted text null,
      previous_secret_expires_at timestamptz null,
      consecutive_failures integer not null default 0,
      failing_since timestamptz null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now())`);
    this.addSql(`create index webhook_endpoints_org_idx on webhook_endpoints (organization_id, created_at)`);
    this.addSql(`create table webhook_deliveries (
      id uuid primary key,
      endpoint_id uuid not null references webhook_endpoints(id) on delete cascade,
      organization_id uuid not null,
      session_id uuid null,
      event_id uuid not null,
      event_type text not null,
      sequence integer not null default 0,
      payload jsonb not null,
      state text not null default 'pending',
      attempts integer not null default 0,
      next_attempt_at timestamptz not null default now(),
      lease_until timestamptz null,
      lease_owner text null,
      last_status integer null,
      last_error text null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      delivered_at timestamptz null,
      unique (endpoint_id, event_id))`);
    // The claim's scan (due rows) and its head-of-line test (an earlier pending row of the same session).
    this.addSql(`create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at) where state = 'pending'`);
    this.addSql(
      `create index webhook_deliveries_order_idx on webhook_deliveries (endpoint_id, session_id, sequence) where state = 'pending'`,
    );
    this.addSql(`create index webhook_deliveries_org_pending_idx on webhook_deliveries (organization_id) where state = 'pending'`);
    this.addSql(`create index webhook_deliveries_endpoint_idx on webhook_deliveries (endpoint_id, created_at desc, id desc)`);
    this.addSql(`create index webhook_deliveries_finished_idx on webhook_deliveries (updated_at) where state <> 'pending'`);
    this.addSql(`create table webhook_attempts (
      id uuid primary key,
      delivery_id uuid not null references webhook_deliveries(id) on delete cascade,
      attempt integer not null,
      started_at timestamptz not null,
      status integer null,
      latency_ms integer not null,
      error text null,
      instance_id text not null)`);
    this.addSql(`create index webhook_attempts_delivery_idx on webhook_attempts (delivery_id, attempt)`);
  }
}
