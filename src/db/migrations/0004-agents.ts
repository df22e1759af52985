import { Migration } from '@mikro-orm/migrations';

/**
 * Agents (org-owned) and harnesses (built-in rows have a null organisation). The built-in
 * harness rows themselves are written at start from code (src/api/harnesses/built-in.ts).
 */
export class AgentsMigration extends Migration {
  override name = '0004-agents';

  async up(): Promise<void> {
    this.addSql(`create table agents (
      id uuid primary key, organization_id uuid not null references organizations(id) on delete cascade,
      name text not null, description text null, system_prompt text not null, default_model_id uuid null,
      tags jsonb not null default '[]', capabilities jsonb not null default '[]', client_tools jsonb not null default '[]',
      max_iterations integer null check (max_iterations between 1 and 1000),
      status text not null check (status in ('active','archived')),
      created_at timestamptz not null, updated_at timestamptz not null)`);
    this.addSql(`create index agents_org_created_idx on agents (organization_id, created_at, id)`);
    this.addSql(`create table harnesses (
      id uuid primary key, organization_id uuid null references organizations(id) on delete cascade,
      name text not null, description text null, system_prompt text not null,
      capabilities jsonb not null default '[]', default_model_id uuid null,
      max_iterations integer null check (max_iterations between 1 and 1000),
      status text not null check (status in ('active','archived')),
      created_at timestamptz not null, updated_at timestamptz not null)`);
    this.addSql(`create index harnesses_org_idx on harnesses (organization_id)`);
  }
}
