import { Migration } from '@mikro-orm/migrations';

/**
 * Each organisation's count of capped rows (ORG_MAX_SESSIONS, ORG_MAX_AGENTS), kept by triggers
 * on every insert and delete, cascades included, so a create checks its cap by reading one row
 * instead of counting the organisation's rows (src/db/org-caps.ts): the count had made every
 * session create cost more the more sessions its organisation held. During a rolling upgrade an
 * instance of the previous release still checks by counting under its advisory lock, which does
 * not serialise with this row's lock: creates racing on both releases may pass a cap by one.
 */
export class OrgRowCountsMigration extends Migration {
  override name = '0029-org-row-counts';

  async up(): Promise<void> {
    this.addSql(`create table org_row_counts (
      organization_id uuid not null references organizations(id) on delete cascade,
      counted text not null,
      n bigint not null default 0,
      primary key (organization_id, counted))`);
    this.addSql(`create function org_row_counts_track() returns trigger language plpgsql as $$
      begin
        if tg_op = 'INSERT' then
          insert into org_row_counts (organization_id, counted, n) values (new.organization_id, tg_table_name, 1)
            on conflict (organization_id, counted) do update set n = org_row_counts.n + 1;
        else
          update org_row_counts set n = n - 1 where organization_id = old.organization_id and counted = tg_table_name;
        end if;
        return null;
      end $$`);
    // The triggers first: creating one locks its table against writes until this migration
    // commits, so the counts below miss no row another instance writes meanwhile.
    for (const table of ['sessions', 'agents']) {
      this.addSql(`create trigger ${table}_org_row_count after insert or delete on ${table}
        for each row execute function org_row_counts_track()`);
      this.addSql(`insert into org_row_counts (organization_id, counted, n)
        select organization_id, '${table}', count(*) from ${table} group by organization_id`);
    }
  }
}
