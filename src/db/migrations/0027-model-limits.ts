import { Migration } from '@mikro-orm/migrations';

/**
 * A model's context window and output limit (issue 26, compaction): null means "not stated by
 * the record"; the turn then uses the known family's default (src/llm/model-limits.ts).
 */
export class ModelLimitsMigration extends Migration {
  override name = '0027-model-limits';

  async up(): Promise<void> {
    this.addSql(`alter table llm_models add column context_window integer null`);
    this.addSql(`alter table llm_models add column max_output_tokens integer null`);
  }
}
