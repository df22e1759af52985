import { Migration } from '@mikro-orm/migrations';

/**
 * Capability storage: session files, key/value entries, encrypted secrets, SQLite databases,
 * schedules and images (all per session, deleted with it), and encrypted user connections.
 * File paths use the "C" collation so ordering is bytewise and `/dir/` prefixes are ranges.
 */
export class StorageMigration extends Migration {
  override name = '0007-storage';

  async up(): Promise<void> {
    this.addSql(`create table session_files (
      id uuid primary key, session_id uuid not null references sessions(id) on delete cascade,
      organization_id uuid not null, path text collate "C" not null, is_directory boolean not null,
      is_readonly boolean not null default false, content bytea null, content_type text null,
      size_bytes bigint not null default 0, sha256 text null,
      created_at timestamptz not null, updated_at timestamptz not null,
      unique (session_id, path))`);
    this.addSql(`create table session_kv (
      session_id uuid not null references sessions(id) on delete cascade, key text collate "C" not null,
      value text not null, created_at timestamptz not null, updated_at timestamptz not null,
      primary key (session_id, key))`);
    this.addSql(`create table session_secrets (
      id uuid primary key, session_id uuid not null references sessions(id) on delete cascade,
      organization_id uuid not null, name text collate "C" not null, ciphertext text not null,
      created_at timestamptz not null, updated_at timestamptz not null,
      unique (session_id, name))`);
    this.addSql(`create table session_sql_databases (
      session_id uuid not null references sessions(id) on delete cascade, name text collate "C" not null,
      content bytea not null, size_bytes bigint not null, version integer not null default 1,
      created_at timestamptz not null, updated_at timestamptz not null,
      primary key (session_id, name))`);
    this.addSql(`create table session_schedules (
      id uuid primary key, session_id uuid not null references sessions(id) on delete cascade,
      organization_id uuid not null, name text not null, message text not null,
      kind text not null check (kind in ('once','cron')), scheduled_at timestamptz null, cron_expression text null,
      timezone text not null, status text not null check (status in ('active','completed','cancelled')),
      next_run_at timestamptz null, last_run_at timestamptz null, fire_count integer not null default 0,
      claimed_by text null, claim_token uuid null, claim_expires_at timestamptz null, available_at timestamptz null,
      created_at timestamptz not null, updated_at timestamptz not null)`);
    this.addSql(`create index session_schedules_session_idx on session_schedules (session_id, status)`);
    this.addSql(`create index session_schedules_due_idx on session_schedules (next_run_at) where status = 'active'`);
    this.addSql(`create table images (
      id text primary key, organization_id uuid not null references organizations(id) on delete cascade,
      session_id uuid not null references sessions(id) on delete cascade, user_id uuid not null,
      filename text not null, content_type text not null, size_bytes integer not null, sha256 text not null,
      content bytea not null, created_at timestamptz not null)`);
    this.addSql(`create index images_session_idx on images (session_id)`);
    this.addSql(`create table user_connections (
      id uuid primary key, organization_id uuid not null references organizations(id) on delete cascade,
      user_id uuid not null references users(id) on delete cascade, provider text not null,
      ciphertext text not null, created_at timestamptz not null, updated_at timestamptz not null,
      unique (user_id, provider))`);
  }
}
