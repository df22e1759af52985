import { Migration } from '@mikro-orm/migrations';

/**
 * The organisation's busy sessions, counted before every new turn against ORG_MAX_TURNS_IN_FLIGHT
 * (issue 30 item 6): a partial index holds only sessions with a turn in flight, so the count reads
 * a handful of entries however many sessions the organisation keeps.
 */
export class SessionsBusyIndexMigration extends Migration {
  override name = '0019-sessions-busy-index';

  async up(): Promise<void> {
    this.addSql(`create index sessions_busy_org_idx on sessions (organization_id) where status in ('active', 'waiting_for_tool_results')`);
  }
}
