import { Migration } from '@mikro-orm/migrations';

/** Login sessions: refresh-token families, rotating refresh tokens, and the shared JWT secret. */
export class AuthMigration extends Migration {
  override name = '0003-auth';

  async up(): Promise<void> {
    this.addSql(`create table token_families (
      id uuid primary key, organization_id uuid not null references organizations(id) on delete cascade,
      user_id uuid not null references users(id) on delete cascade,
      created_at timestamptz not null, revoked_at timestamptz null, revoke_reason text null)`);
    this.addSql(`create index token_families_org_idx on token_families (organization_id)`);
    this.addSql(`create index token_families_user_idx on token_families (user_id)`);
    this.addSql(`create table refresh_tokens (
      id uuid primary key, organization_id uuid not null references organizations(id) on delete cascade,
      user_id uuid not null references users(id) on delete cascade,
      family_id uuid not null references token_families(id) on delete cascade,
      token_hash text not null unique, expires_at timestamptz not null, used_at timestamptz null,
      created_at timestamptz not null)`);
    this.addSql(`create index refresh_tokens_org_idx on refresh_tokens (organization_id)`);
    this.addSql(`create index refresh_tokens_user_idx on refresh_tokens (user_id)`);
    this.addSql(`create index refresh_tokens_family_idx on refresh_tokens (family_id)`);
    this.addSql(`create table auth_secrets (name text primary key, value text not null, created_at timestamptz not null)`);
  }
}
