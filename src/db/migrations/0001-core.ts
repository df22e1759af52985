import { Migration } from '@mikro-orm/migrations';

/** Organisations, users, API keys, and the tables of the local (embedded) bus adapter. */
export class CoreMigration extends Migration {
  override name = '0001-core';

  async up(): Promise<void> {
    this.addSql(`create table organizations (
      id uuid primary key, name text not null, default_model_id uuid null,
      created_at timestamptz not null, updated_at timestamptz not null)`);
    this.addSql(`create table users (
      id uuid primary key, organization_id uuid not null references organizations(id) on delete cascade,
      email text not null unique, name text not null, password_hash text null,
      role text not null check (role in ('admin','member')), operator boolean not null default false,
      created_at timestamptz not null, updated_at timestamptz not null)`);
    this.addSql(`create index users_org_idx on users (organization_id)`);
    this.addSql(`create table api_keys (
      id uuid primary key, organization_id uuid not null references organizations(id) on delete cascade,
      user_id uuid not null references users(id) on delete cascade, name text not null, prefix text not null,
      key_hash text not null unique, expires_at timestamptz null, last_used_at timestamptz null,
      revoked_at timestamptz null, created_at timestamptz not null)`);
    this.addSql(`create index api_keys_org_idx on api_keys (organization_id)`);
    this.addSql(`create index api_keys_user_idx on api_keys (user_id)`);
    // Local bus: the event log and the turn queue live in SQL so embedded mode survives restarts.
    this.addSql(`create table bus_events (
      session_id uuid not null, sequence integer not null, id uuid not null unique,
      body jsonb not null, primary key (session_id, sequence))`);
    this.addSql(`create table bus_turns (
      session_id uuid primary key, turn_id uuid not null, job jsonb not null,
      available_at timestamptz not null, claimed_by text null, claim_token uuid null,
      claim_expires_at timestamptz null, delivery_count integer not null default 0,
      created_at timestamptz not null default now())`);
    this.addSql(`create index bus_turns_available_idx on bus_turns (available_at)`);
  }
}
