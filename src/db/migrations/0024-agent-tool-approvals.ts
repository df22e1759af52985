import { Migration } from '@mikro-orm/migrations';

/**
 * An agent's tool approval rules (issue 27 item 2; docs/decisions/0101-tool-approval.md). Null:
 * none (every server tool call may run), so existing agents keep their behaviour. Sessions keep
 * theirs in the configuration copy (`sessions.config`), which needs no column.
 */
export class AgentToolApprovalsMigration extends Migration {
  override name = '0024-agent-tool-approvals';

  async up(): Promise<void> {
    this.addSql(`alter table agents add column tool_approvals jsonb null`);
  }
}
