import { Migration } from '@mikro-orm/migrations';

/**
 * Turns whose start request was answered with an error while its job's publish was still in
 * flight (issue 32 item 1): a worker that later claims such a job finds it here and drops it,
 * so an answered 5xx never turns into a turn. The newest 16 per session are kept; an older
 * one's job has long been delivered (the queue holds one job per session).
 */
export class TurnVoidsMigration extends Migration {
  override name = '0018-turn-voids';

  async up(): Promise<void> {
    this.addSql(`alter table sessions add column void_turn_ids uuid[] not null default '{}'`);
  }
}
