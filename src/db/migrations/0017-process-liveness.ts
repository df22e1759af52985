import { Migration } from '@mikro-orm/migrations';

/**
 * Which service process holds an `Idempotency-Key` that is in flight, and whether that process
 * is alive (src/db/process-liveness.ts): a retry after the first request's instance died takes
 * the key over once the process's heartbeat stops, not after a fixed minute (issue 13).
 */
export class ProcessLivenessMigration extends Migration {
  override name = '0017-process-liveness';

  async up(): Promise<void> {
    this.addSql(`create table process_liveness (
      process_id text primary key,
      instance_id text not null,
      started_at timestamptz not null default now(),
      beat_at timestamptz not null default now()
    )`);
    this.addSql(`alter table idempotency_keys add column owner_process_id text null`);
  }
}
