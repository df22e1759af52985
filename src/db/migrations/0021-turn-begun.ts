import { Migration } from '@mikro-orm/migrations';

/**
 * The latest turn whose worker began writing its log (one writer for a turn, issue 29). The row
 * orders that beginning against a void (an answered 5xx) and against a cancel that came before
 * any of the turn's events: whichever UPDATE lands first decides, under the row lock.
 */
export class TurnBegunMigration extends Migration {
  override name = '0021-turn-begun';

  async up(): Promise<void> {
    this.addSql(`alter table sessions add column begun_turn_id uuid null`);
    // Turns that ran before this column existed have begun: their void and cancel need not ask.
    this.addSql(`update sessions set begun_turn_id = current_turn_id where current_turn_id is not null`);
  }
}
