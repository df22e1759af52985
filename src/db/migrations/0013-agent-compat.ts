import { Migration } from '@mikro-orm/migrations';

/**
 * Agent fields the earlier public API's clients send
 * (docs/decisions/0044-earlier-api-aliases.md): a display name, the model reference as the client gave it (an id or a
 * model name; `default_model_id` holds what it resolved to), and whether a step's tools may run
 * in parallel (null: the default, yes). All nullable: existing rows keep their behaviour.
 */
export class AgentCompatMigration extends Migration {
  override name = '0013-agent-compat';

  async up(): Promise<void> {
    this.addSql(
      `alter table agents add column display_name text null, add column model text null, add column parallel_tool_calls boolean null`,
    );
  }
}
