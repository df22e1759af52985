import { Migration } from '@mikro-orm/migrations';

/**
 * Messages sent while a turn runs, with `on_busy: enqueue` or `interrupt` (issue 26 item 3;
 * docs/decisions/0097-messages-while-busy.md). A row is `queued` until its turn begins
 * (`started`) or its sender cancels it (`cancelled`); rows that are no longer queued stay as
 * tombstones for the Idempotency-Key's lifetime, so a retried request never queues twice.
 * `turn_id` and `accepted` (the message's and its turn's ids) are set when a dispatcher hands
 * the message to the turn queue, so a dispatch retried after a crash starts the same turn.
 */
export class QueuedMessagesMigration extends Migration {
  override name = '0023-queued-messages';

  async up(): Promise<void> {
    this.addSql(`create table queued_messages (
      id uuid primary key,
      session_id uuid not null references sessions(id) on delete cascade,
      organization_id uuid not null references organizations(id) on delete cascade,
      user_id uuid null,
      priority smallint not null default 1,
      state text not null default 'queued',
      message jsonb not null,
      turn_id uuid null,
      accepted jsonb null,
      traceparent text null,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now())`);
    // The queue's order (interrupts first, then arrival) and the per-session / per-org counts.
    this.addSql(`create index queued_messages_session_idx on queued_messages (session_id, priority, id) where state = 'queued'`);
    this.addSql(`create index queued_messages_org_idx on queued_messages (organization_id) where state = 'queued'`);
    this.addSql(`create index queued_messages_done_idx on queued_messages (session_id, updated_at) where state <> 'queued'`);
  }
}
