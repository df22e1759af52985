import { Migration } from '@mikro-orm/migrations';

/**
 * Who created an agent: members change and archive only their own agents
 * (docs/decisions/0018-member-admin-matrix.md). Rows from before this migration keep null, which the
 * ownership rule treats as an admin's agent.
 */
export class AgentCreatorMigration extends Migration {
  override name = '0012-agent-creator';

  async up(): Promise<void> {
    this.addSql(`alter table agents add column created_by uuid null`);
  }
}
