import { Migration } from '@mikro-orm/migrations';

/**
 * The turn engine's cancel flag: the turn a user asked to cancel. Set once per turn by a
 * conditional UPDATE (the race-free guard of POST cancel); the worker will not mark the
 * session idle while a cancel for its turn is pending and unhandled.
 */
export class TurnsMigration extends Migration {
  override name = '0008-turns';

  async up(): Promise<void> {
    this.addSql(`alter table sessions add column cancel_requested_turn_id uuid null`);
  }
}
