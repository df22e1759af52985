import { Migration } from '@mikro-orm/migrations';

/**
 * Per-instance task counts for `GET /v1/durable/metrics/timeseries` in distributed mode
 * (src/observability/timeseries-store.ts): each instance's heartbeat, and its turns claimed and
 * completed per unix minute. Written every few seconds by every instance, pruned after a day.
 */
export class InstanceMetricsMigration extends Migration {
  override name = '0015-instance-metrics';

  async up(): Promise<void> {
    this.addSql(`create table service_instances (
      instance_id text primary key,
      role text not null,
      started_at timestamptz not null default now(),
      last_seen_at timestamptz not null default now()
    )`);
    this.addSql(`create table instance_task_counts (
      instance_id text not null,
      unix_minute bigint not null,
      task_claimed integer not null default 0,
      task_completed integer not null default 0,
      primary key (instance_id, unix_minute)
    )`);
    this.addSql('create index instance_task_counts_minute on instance_task_counts (unix_minute)');
  }
}
