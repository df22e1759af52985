import { Migration } from '@mikro-orm/migrations';

/**
 * What a request with an `Idempotency-Key` is about to create (the ids of the message it is
 * about to store), written before the side effect: a retry after the first request's instance
 * died, or after it answered 5xx with an unknown outcome, finds what was stored instead of
 * creating it again (issue 13 item 1, item 8).
 */
export class IdempotencyReservationMigration extends Migration {
  override name = '0016-idempotency-reservation';

  async up(): Promise<void> {
    this.addSql(`alter table idempotency_keys add column reservation text null`);
  }
}
