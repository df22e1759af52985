import { Migration } from '@mikro-orm/migrations';

/** Sessions. Per-session storage tables reference sessions(id) with on delete cascade. */
export class SessionsMigration extends Migration {
  override name = '0005-sessions';

  async up(): Promise<void> {
    this.addSql(`create table sessions (
      id uuid primary key, organization_id uuid not null references organizations(id) on delete cascade,
      user_id uuid not null, harness_id uuid not null, agent_id uuid null, title text null,
      tags jsonb not null default '[]', model_id uuid null, capabilities jsonb not null default '[]',
      features jsonb not null default '[]', status text not null, current_turn_id uuid null,
      usage jsonb not null default '{"input_tokens":0,"output_tokens":0,"cache_read_tokens":0}',
      chat_user_id uuid null unique,
      created_at timestamptz not null, updated_at timestamptz not null)`);
    this.addSql(`create index sessions_org_created_idx on sessions (organization_id, created_at desc, id desc)`);
    this.addSql(`create index sessions_org_agent_idx on sessions (organization_id, agent_id)`);
  }
}
