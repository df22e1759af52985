import { Migration } from '@mikro-orm/migrations';

/**
 * LLM providers (encrypted key per row) and their models. Deleting a provider deletes its
 * models; the API refuses that while a model is referenced as a default (docs/decisions/0021-llm-providers-and-models.md).
 */
export class LlmMigration extends Migration {
  override name = '0006-llm';

  async up(): Promise<void> {
    this.addSql(`create table llm_providers (
      id uuid primary key, organization_id uuid not null references organizations(id) on delete cascade,
      name text not null,
      provider_type text not null check (provider_type in ('openai','openai_completions','anthropic','gemini','llmsim')),
      api_key_encrypted text not null, base_url text null, last_synced_at timestamptz null,
      created_at timestamptz not null, updated_at timestamptz not null)`);
    this.addSql(`create index llm_providers_org_created_idx on llm_providers (organization_id, created_at, id)`);
    this.addSql(`create table llm_models (
      id uuid primary key, organization_id uuid not null references organizations(id) on delete cascade,
      provider_id uuid not null references llm_providers(id) on delete cascade,
      model_id text not null, display_name text not null, capabilities jsonb not null default '[]',
      enabled boolean not null default true,
      source text not null check (source in ('manual','discovered')),
      status text not null check (status in ('active','stale')),
      created_at timestamptz not null, updated_at timestamptz not null,
      unique (provider_id, model_id))`);
    this.addSql(`create index llm_models_org_created_idx on llm_models (organization_id, created_at, id)`);
  }
}
