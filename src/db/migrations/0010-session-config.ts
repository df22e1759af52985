import { Migration } from '@mikro-orm/migrations';
import { createCapabilityRegistry, resolveCapabilities } from '../../capabilities/index.js';
import { LIVE_SESSION_CONFIG_SQL, SESSION_LAYERS_JOIN_SQL } from '../session-config.js';

/**
 * Session configuration snapshots (spec 3.4 rule 3): `sessions.config` holds the harness and
 * agent a session runs with. Existing sessions get the configuration they would have run their
 * next turn with (the live rows), and their `features` are recomputed from it, so the view
 * and the next turn agree. The capability → features map (dependencies included) comes from
 * the capability registry of the version that applies the migration.
 */
export class SessionConfigMigration extends Migration {
  override name = '0010-session-config';

  async up(): Promise<void> {
    this.addSql(`alter table sessions add column config jsonb null`);
    this.addSql(sessionConfigBackfillSql());
  }
}

/**
 * The backfill: every session without a snapshot gets its harness and agent rows as they are
 * now, and its features recomputed from them. Exported for the test that runs it on such rows.
 */
export function sessionConfigBackfillSql(): string {
  const map = sqlLiteral(JSON.stringify(featuresByCapability()));
  return `update sessions t set config = x.config, features = x.features
    from (
      select s.id, ${LIVE_SESSION_CONFIG_SQL} as config,
        coalesce((
          select jsonb_agg(distinct f.value)
          from jsonb_array_elements(coalesce(h.capabilities, '[]'::jsonb) || coalesce(a.capabilities, '[]'::jsonb) || coalesce(s.capabilities, '[]'::jsonb)) item(value),
            jsonb_array_elements_text(coalesce('${map}'::jsonb -> coalesce(item.value->>'ref', item.value #>> '{}'), '[]'::jsonb)) f(value)
        ), '[]'::jsonb) as features
      from ${SESSION_LAYERS_JOIN_SQL}
      where s.config is null
    ) x
    where t.id = x.id`;
}

/** Each capability's features with those of its dependencies. */
function featuresByCapability(): Record<string, string[]> {
  const registry = createCapabilityRegistry();
  return Object.fromEntries(registry.list().map((c) => [c.id, resolveCapabilities({ session: [c.id] }, registry).features]));
}

function sqlLiteral(text: string): string {
  return text.replaceAll("'", "''");
}
