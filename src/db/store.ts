import type { EntityManager, MikroORM } from '@mikro-orm/core';
import type { PostgreSqlConnection } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import type { Logger } from '../log.js';
import { type PhaseTimer, untimed } from '../start-phases.js';
import { entities } from './entities/index.js';
import { migrations } from './migrations/index.js';
import { startEmbeddedVacuum } from './embedded-vacuum.js';
import { startEmbeddedDatabase, type EmbeddedDatabase, type PgliteThread } from './pglite-thread.js';
import { poolSizingWarning } from './pool-sizing.js';
import { preparedPerClient, preparedPerConnection, type PreparedSql, type RunPrepared } from './prepared-sql.js';

export interface StoreOptions {
  /** `postgres://…` for distributed mode; absent for embedded PGlite under dataDir. */
  databaseUrl?: string;
  dataDir: string;
  poolMax?: number;
  /** Keep the hot statements prepared (prepared-sql.ts; default true). */
  preparedStatements?: boolean;
  /** EXPECTED_INSTANCES, for the pool sizing warning (PostgreSQL only; default 1). */
  expectedInstances?: number;
  log: Logger;
  /** Times the start's `database.connect` and `database.migrations` phases. */
  phases?: PhaseTimer;
  /** Embedded mode: the database thread, when the caller started it already (src/main.ts, while modules load). */
  embeddedDatabase?: Promise<EmbeddedDatabase>;
  /** Embedded mode: ms between two rounds of vacuum (embedded-vacuum.ts; default 10 s, 0: never). */
  embeddedVacuumIntervalMs?: number;
}

export type Store = Awaited<ReturnType<typeof createStore>>;

/**
 * Opens the relational store (PostgreSQL or PGlite, one SQL dialect) and applies the
 * checked-in migrations. Schema auto-sync is never used.
 */
export async function createStore({
  databaseUrl,
  dataDir,
  poolMax = 10,
  preparedStatements = true,
  expectedInstances = 1,
  log,
  phases = untimed,
  embeddedDatabase,
  embeddedVacuumIntervalMs = 10_000,
}: StoreOptions) {
  const common = {
    entities,
    extensions: [Migrator],
    migrations: { migrationsList: migrations, snapshot: false, transactional: true, silent: true },
    allowGlobalContext: false,
    debug: false,
    ensureDatabase: true,
    logger: (message: string) => log.debug({ orm: true }, message),
  };
  const connect = async (): Promise<{ orm: MikroORM; embedded?: PgliteThread }> => {
    // Each mode loads only its own driver: a start skips a few hundred ms of module loading.
    const { MikroORM: PostgresOrm } = await import('@mikro-orm/postgresql');
    if (databaseUrl) {
      await ensureDatabase(databaseUrl, log);
      const orm = (await PostgresOrm.init({
        ...common,
        ensureDatabase: false,
        clientUrl: databaseUrl,
        pool: { min: 0, max: poolMax },
      })) as unknown as MikroORM;
      await warnOnPoolSizing(orm, { poolMax, instances: expectedInstances }, log);
      return { orm };
    }
    // PGlite runs on its own thread behind the PostgreSQL wire protocol
    // (docs/decisions/0076-pglite-off-thread.md): the service uses distributed mode's driver.
    const { thread: embedded, connections } = await (embeddedDatabase ?? startEmbeddedDatabase({ dataDir, poolMax, log }));
    try {
      const orm = (await PostgresOrm.init({
        ...common,
        ensureDatabase: false,
        host: embedded.host,
        port: embedded.port,
        user: 'postgres',
        dbName: 'postgres',
        pool: { min: 0, max: connections },
      })) as unknown as MikroORM;
      return { orm, embedded };
    } catch (err) {
      await embedded.close();
      throw err;
    }
  };
  // "connect ECONNREFUSED 127.0.0.1:5432" alone does not say it was the database (issue 30 item 16).
  const { orm, embedded } = await phases.time('database.connect', () =>
    connect().catch((err: unknown) => {
      throw new Error(`database: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }),
  );
  const applied = await phases.time('database.migrations', () =>
    databaseUrl ? withMigrationLock(databaseUrl, () => orm.migrator.up()) : orm.migrator.up(),
  );
  if (applied.length) log.info({ migrations: applied.map((m) => m.name) }, 'store migrations applied');
  const execute = async (text: string, params: unknown[]) => (await orm.em.getConnection().execute(text, params)) as unknown[];
  // Prepared through the driver's pool under MikroORM, with bound parameters, unless the
  // operator's pooler cannot carry named statements. PGlite: one session behind every connection.
  const runPrepared: RunPrepared | undefined = !preparedStatements
    ? undefined
    : (databaseUrl ? preparedPerConnection : preparedPerClient)(
        await (orm.em.getConnection() as unknown as PostgreSqlConnection).getNativeClient(),
      );
  // PGlite has no autovacuum (one backend, no postmaster): the store does its part.
  const vacuum = embedded
    ? startEmbeddedVacuum({ sql: async <T>(text: string) => (await execute(text, [])) as T[], log, intervalMs: embeddedVacuumIntervalMs })
    : undefined;

  return {
    kind: databaseUrl ? ('postgres' as const) : ('pglite' as const),
    orm,
    /** A fresh EntityManager with its own identity map (one per request or unit of work). */
    em(): EntityManager {
      return orm.em.fork();
    },
    /** Raw parameterised SQL (`?` placeholders), for the few places that need it; hot statements prepared (prepared-sql.ts). */
    async sql<T = Record<string, unknown>>(query: string | PreparedSql, params: unknown[] = []): Promise<T[]> {
      if (typeof query === 'string') return (await execute(query, params)) as T[];
      return (await (runPrepared ? runPrepared(query, params) : execute(query.text, params))) as T[];
    },
    async ping(): Promise<void> {
      await orm.em.getConnection().execute('select 1');
    },
    /** Embedded mode: the vacuum the store runs on a timer (its `round()` runs one now). */
    embeddedVacuum: vacuum,
    async close(): Promise<void> {
      await vacuum?.stop();
      await orm.close(true);
      await embedded?.close();
    },
  };
}

/** Logs the spec's pool sizing warning when pool × instances exceeds 80 % of PostgreSQL's max_connections. */
async function warnOnPoolSizing(orm: MikroORM, sizing: { poolMax: number; instances: number }, log: Logger): Promise<void> {
  const [row] = (await orm.em.getConnection().execute('show max_connections')) as { max_connections: string }[];
  const maxConnections = Number(row?.max_connections);
  if (!Number.isFinite(maxConnections)) return;
  const input = { ...sizing, maxConnections };
  const warning = poolSizingWarning(input);
  if (warning) log.warn({ component: 'store', ...input }, warning);
}

/** Lock id serialising migrations of instances that start at once on the same database. */
const MIGRATION_LOCK_ID = 7_351_001;

/**
 * Creates the database of `databaseUrl` when it does not exist. Instances that start at once on
 * a server without it serialise on the migration lock id, taken in the maintenance database
 * (`postgres`, else `template1`; advisory locks are per database and the target is not there
 * yet), and look again under it, so exactly one creates it and none fails on the others' CREATE.
 */
async function ensureDatabase(databaseUrl: string, log: Logger): Promise<void> {
  const { default: pg } = await import('pg');
  const probe = new pg.Client({ connectionString: databaseUrl });
  try {
    await probe.connect();
  } catch (err) {
    if ((err as { code?: string }).code !== PG_INVALID_CATALOG_NAME) throw err;
    return createDatabase(databaseUrl, log);
  }
  await probe.end();
}

async function createDatabase(databaseUrl: string, log: Logger): Promise<void> {
  const name = decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
  let lastErr: unknown;
  for (const maintenance of ['postgres', 'template1']) {
    const url = new URL(databaseUrl);
    url.pathname = '/' + maintenance;
    try {
      await withMigrationLock(url.toString(), async (client) => {
        const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [name]);
        if (rowCount) return;
        await client.query(`create database "${name.replaceAll('"', '""')}"`);
        log.info({ component: 'store', database: name }, 'database created');
      });
      return;
    } catch (err) {
      lastErr = err;
      if ((err as { code?: string }).code !== PG_INVALID_CATALOG_NAME) break;
    }
  }
  throw new Error(`cannot create database ${name}: ${(lastErr as Error).message}`, { cause: lastErr });
}

/** SQLSTATE 3D000: the database named in the connection does not exist. */
const PG_INVALID_CATALOG_NAME = '3D000';

/** Runs `fn` while holding a session-level advisory lock on a dedicated connection. */
async function withMigrationLock<T>(databaseUrl: string, fn: (client: import('pg').Client) => Promise<T>): Promise<T> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    return await fn(client);
  } finally {
    await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => undefined);
    await client.end();
  }
}
