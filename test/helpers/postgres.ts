import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** Where the tests find PostgreSQL; override with TEST_PG_URL. */
export const TEST_PG_URL = process.env['TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * Creates a fresh, uniquely named database and returns its URL plus a drop() for cleanup.
 * Fails with a message that says what to start when PostgreSQL is not reachable.
 */
export async function createTestDatabase(label = 'test'): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `ass_${label.replace(/[^a-z0-9]/gi, '_').toLowerCase()}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: TEST_PG_URL });
  try {
    await admin.connect();
  } catch (err) {
    throw new Error(
      `PostgreSQL is not reachable at ${TEST_PG_URL}. Start it (e.g. 'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start') or set TEST_PG_URL.`,
      { cause: err },
    );
  }
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(TEST_PG_URL);
  url.pathname = '/' + name;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: TEST_PG_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}
