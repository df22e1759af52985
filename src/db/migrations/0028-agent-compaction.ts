import { Migration } from '@mikro-orm/migrations';

/**
 * An agent's compaction settings (issue 26; docs/decisions/0103): `{threshold_percent, model_id}`,
 * null for none (the server's settings and the session's model). Sessions keep theirs, and their
 * agent's, in the configuration copy (`sessions.config`), which needs no column.
 */
export class AgentCompactionMigration extends Migration {
  override name = '0028-agent-compaction';

  async up(): Promise<void> {
    this.addSql(`alter table agents add column compaction jsonb null`);
  }
}
