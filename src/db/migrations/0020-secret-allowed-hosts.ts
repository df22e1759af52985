import { Migration } from '@mikro-orm/migrations';

/**
 * The hosts a session secret may be sent to (`{{secret:NAME}}` in a `fetch_url` header; issue 30):
 * none until the user sets them, so existing secrets are not sent anywhere until bound.
 */
export class SecretAllowedHostsMigration extends Migration {
  override name = '0020-secret-allowed-hosts';

  async up(): Promise<void> {
    this.addSql(`alter table session_secrets add column allowed_hosts jsonb not null default '[]'::jsonb`);
  }
}
