import { Migration } from '@mikro-orm/migrations';

/**
 * A session's folded transcript up to an event (issue 26 item 2; docs/decisions/0099-session-snapshots.md):
 * a turn on any instance starts from it and reads only the events after `sequence`. One row per
 * session, replaced as turns complete; `version` is the fold format's, a row of another version
 * is ignored. Gone with its session (cascade).
 */
export class SessionSnapshotsMigration extends Migration {
  override name = '0026-session-snapshots';

  async up(): Promise<void> {
    this.addSql(`create table session_snapshots (
      session_id uuid primary key references sessions(id) on delete cascade,
      version integer not null,
      sequence integer not null,
      body text not null,
      updated_at timestamptz not null default now())`);
  }
}
