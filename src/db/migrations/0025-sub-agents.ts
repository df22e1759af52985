import { Migration } from '@mikro-orm/migrations';

/**
 * Sub-agents (issue 27 item 3; docs/decisions/0102-sub-agents.md): a child session knows the
 * session, turn and tool call that created it, how deep it sits, and the iteration budget its
 * turns run with. One child per tool call: the unique index makes a redelivered parent turn find
 * the child it created, never make a second.
 */
export class SubAgentsMigration extends Migration {
  override name = '0025-sub-agents';

  async up(): Promise<void> {
    this.addSql(`alter table sessions
      add column parent_session_id uuid null references sessions(id) on delete set null,
      add column parent_tool_call_id text null,
      add column parent_turn_id uuid null,
      add column subagent_depth integer not null default 0,
      add column max_iterations integer null`);
    this.addSql(`create unique index sessions_parent_tool_call_idx on sessions (parent_session_id, parent_tool_call_id)
      where parent_session_id is not null`);
    this.addSql(
      `create index sessions_parent_turn_idx on sessions (parent_session_id, parent_turn_id) where parent_session_id is not null`,
    );
  }
}
