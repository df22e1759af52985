/**
 * SQLite for `session_sql_database`, in WebAssembly (sql.js). A database is an in-memory copy
 * of a file's bytes: the storage layer loads the bytes per (session, name), runs the call and,
 * after `exec`, saves `export()`. Databases share nothing: each is its own SQLite connection on
 * its own file, and statements that reach other files (ATTACH, DETACH, VACUUM INTO) are refused.
 *
 * This module is synchronous and runs wherever it is called; sql.js cannot interrupt a statement.
 * The service therefore calls it only inside the worker threads of `sql-sandbox.ts`, which
 * enforce a wall-clock deadline by terminating the worker; `limits` bound what SQLite itself
 * may allocate and write (docs/decisions/0032-sql-sandbox-off-thread.md).
 */
import initSqlJs from 'sql.js';
import { PayloadTooLargeError, UnprocessableError } from '../../errors.js';
import { MAX_SQL_QUERY_ROWS, type SqlExecResult, type SqlQueryResult, type SqlSchemaObject, type SqlValue } from '../storage-ports.js';
import { forbiddenSql, isBlankSql, managesTransactions, startsReadOnly } from './sql-text.js';

type SqlJs = Awaited<ReturnType<typeof initSqlJs>>;
type Database = InstanceType<SqlJs['Database']>;
type Statement = ReturnType<Database['prepare']>;

/** One open database. Synchronous; not safe for concurrent writers across copies of the same bytes. */
export interface SqliteDatabase {
  /** Runs one or more statements (exactly one with `params`); atomic unless the SQL manages its own transactions. */
  exec(sql: string, params?: SqlValue[]): SqlExecResult;
  /** Runs one read-only statement, returning at most `limit` rows (default and max 1000); changes are rolled back. */
  query(sql: string, params?: SqlValue[], opts?: { limit?: number }): SqlQueryResult;
  /** Tables, views, indexes and triggers, with columns for tables and views. */
  schema(): SqlSchemaObject[];
  /** The database file's bytes. */
  export(): Uint8Array;
  /** Frees the engine memory; the object is unusable afterwards. */
  close(): void;
}

/** What one open database may use; absent fields are unbounded (SQLite's own maximums). */
export interface SqliteLimits {
  /** Largest database file in bytes: becomes `PRAGMA max_page_count`, so SQLite stops writing at the cap. */
  maxDatabaseBytes?: number;
  /** Largest total size of the rows one query returns (strings, blobs, 8 bytes per number). */
  maxResultBytes?: number;
}

let loading: Promise<SqlJs> | undefined;

/** The WASM module is immutable code; it is loaded once per process and shared. */
function loadSqlJs(): Promise<SqlJs> {
  loading ??= initSqlJs().catch((err: unknown) => {
    loading = undefined;
    throw err;
  });
  return loading;
}

/**
 * Caps the memory SQLite may allocate in this thread's WASM instance (`PRAGMA hard_heap_limit`;
 * it is global to the instance and can only be lowered afterwards, also by user SQL). An
 * allocation past it fails the statement with "out of memory" instead of growing the heap.
 */
export async function limitEngineHeap(bytes: number): Promise<void> {
  const SQL = await loadSqlJs();
  const db = new SQL.Database();
  try {
    db.run(`PRAGMA hard_heap_limit = ${Math.max(1, Math.floor(bytes))}`);
  } finally {
    db.close();
  }
}

/** Opens a database from a file's bytes, or a new empty one for null. */
export async function openDatabase(bytes: Uint8Array | null, limits: SqliteLimits = {}): Promise<SqliteDatabase> {
  const SQL = await loadSqlJs();
  const db = sqlite(() => new SQL.Database(bytes ?? undefined));
  const enforce = limitsEnforcer(db, limits);
  enforce();
  const maxDatabaseBytes = limits.maxDatabaseBytes;
  const run = <T>(fn: () => T) => sqlite(fn, maxDatabaseBytes);
  return {
    exec: (sql, params) => run(() => execSql(db, sql, params, enforce)),
    query: (sql, params, opts) => run(() => querySql(db, sql, params, enforce, opts?.limit, limits.maxResultBytes)),
    schema: () => run(() => readSchema(db)),
    export: () => db.export(),
    close: () => db.close(),
  };
}

/**
 * Sets the limits a user statement must run under: temporary tables and sort spills stay in
 * SQLite's heap (so under the heap limit) instead of files in the engine's unbounded in-memory
 * file system; the main file stops at the page cap. Run before every user statement steps, so
 * that even a pragma the text checks missed cannot lift a limit for the statements after it.
 */
function limitsEnforcer(db: Database, { maxDatabaseBytes }: SqliteLimits): () => void {
  const maxPages = maxDatabaseBytes === undefined ? undefined : Math.max(1, Math.floor(maxDatabaseBytes / scalar(db, 'PRAGMA page_size')));
  const sql = maxPages === undefined ? 'PRAGMA temp_store = MEMORY' : `PRAGMA temp_store = MEMORY; PRAGMA max_page_count = ${maxPages}`;
  return () => db.run(sql);
}

function execSql(db: Database, sql: string, params: SqlValue[] | undefined, enforce: () => void): SqlExecResult {
  refuseForbidden(sql);
  const atomic = !managesTransactions(sql);
  const before = scalar(db, 'SELECT total_changes()');
  if (atomic) db.run('SAVEPOINT exec_call');
  try {
    runStatements(db, sql, params, enforce);
    if (atomic) db.run('RELEASE exec_call');
  } catch (err) {
    if (atomic) rollbackTo(db, 'exec_call');
    else rollbackOpenTransaction(db);
    throw err;
  }
  return { changes: scalar(db, 'SELECT total_changes()') - before, last_insert_rowid: scalar(db, 'SELECT last_insert_rowid()') };
}

function runStatements(db: Database, sql: string, params: SqlValue[] | undefined, enforce: () => void): void {
  const statements = db.iterateStatements(sql);
  let count = 0;
  for (const stmt of statements) {
    count++;
    try {
      if (params) {
        if (!isBlankSql(statements.getRemainingSQL())) throw new UnprocessableError('SQL error: params need exactly one statement');
        stmt.bind(params);
      }
      enforce();
      while (stmt.step());
    } finally {
      stmt.free();
    }
  }
  if (count === 0) throw new UnprocessableError('SQL error: no statement given');
}

function querySql(
  db: Database,
  sql: string,
  params: SqlValue[] | undefined,
  enforce: () => void,
  limit = MAX_SQL_QUERY_ROWS,
  maxResultBytes = Infinity,
): SqlQueryResult {
  refuseForbidden(sql);
  if (!startsReadOnly(sql)) {
    throw new UnprocessableError('SQL error: queries must be read-only (SELECT, WITH, VALUES, PRAGMA, EXPLAIN); use exec to change data');
  }
  const max = Math.max(1, Math.min(limit, MAX_SQL_QUERY_ROWS));
  const before = scalar(db, 'SELECT total_changes()');
  db.run('SAVEPOINT query_call');
  try {
    enforce();
    const result = readRows(db, sql, params, max, maxResultBytes);
    if (scalar(db, 'SELECT total_changes()') !== before) {
      throw new UnprocessableError('SQL error: queries must be read-only; use exec to change data');
    }
    return result;
  } finally {
    rollbackTo(db, 'query_call');
  }
}

function readRows(db: Database, sql: string, params: SqlValue[] | undefined, max: number, maxResultBytes: number): SqlQueryResult {
  const statements = db.iterateStatements(sql);
  const first = statements.next();
  if (first.done) throw new UnprocessableError('SQL error: no statement given');
  const stmt: Statement = first.value;
  try {
    if (!isBlankSql(statements.getRemainingSQL())) throw new UnprocessableError('SQL error: a query must be exactly one statement');
    if (params) stmt.bind(params);
    const rows: SqlValue[][] = [];
    let truncated = false;
    let size = 0;
    while (stmt.step()) {
      if (rows.length === max) {
        truncated = true;
        break;
      }
      const row = stmt.get();
      size += rowBytes(row);
      if (size > maxResultBytes) {
        throw new PayloadTooLargeError(`SQL error: the result exceeds ${maxResultBytes} bytes; select fewer rows or smaller columns`);
      }
      rows.push(row);
    }
    return { columns: stmt.getColumnNames(), rows, truncated };
  } finally {
    stmt.free();
  }
}

function rowBytes(row: SqlValue[]): number {
  let size = 0;
  for (const value of row) size += typeof value === 'string' ? value.length : value instanceof Uint8Array ? value.byteLength : 8;
  return size;
}

const SCHEMA_SQL = `SELECT type, name, tbl_name, sql FROM sqlite_schema
  WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'view' THEN 1 WHEN 'index' THEN 2 ELSE 3 END, name`;

function readSchema(db: Database): SqlSchemaObject[] {
  const [result] = db.exec(SCHEMA_SQL);
  return (result?.values ?? []).map(([type, name, table, sql]) => {
    const object: SqlSchemaObject = {
      type: type as SqlSchemaObject['type'],
      name: String(name),
      table: String(table),
      sql: typeof sql === 'string' ? sql : null,
    };
    if (type === 'table' || type === 'view') object.columns = readColumns(db, String(name));
    return object;
  });
}

function readColumns(db: Database, table: string): NonNullable<SqlSchemaObject['columns']> {
  const [result] = db.exec('SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?)', [table]);
  return (result?.values ?? []).map(([name, type, notnull, dflt, pk]) => ({
    name: String(name),
    type: String(type ?? ''),
    notnull: notnull === 1,
    default_value: dflt === null || dflt === undefined ? null : String(dflt),
    primary_key: typeof pk === 'number' && pk > 0,
  }));
}

function scalar(db: Database, sql: string): number {
  return Number(db.exec(sql)[0]?.values[0]?.[0] ?? 0);
}

function rollbackTo(db: Database, savepoint: string): void {
  try {
    db.run(`ROLLBACK TO ${savepoint}`);
    db.run(`RELEASE ${savepoint}`);
  } catch {
    // SQLite already rolled the whole transaction back (disk full, out of memory), savepoint and all.
    rollbackOpenTransaction(db);
  }
}

/** After a failed script that began its own transaction, end it so no half-applied state is saved. */
function rollbackOpenTransaction(db: Database): void {
  try {
    db.run('ROLLBACK');
  } catch {
    // No transaction was open.
  }
}

function refuseForbidden(sql: string): void {
  const reason = forbiddenSql(sql);
  if (reason) throw new UnprocessableError(`SQL error: ${reason}`);
}

/**
 * SQLite's own errors (bad SQL, constraint violations) become 422s, its resource limits 413s;
 * engine crashes pass through.
 */
function sqlite<T>(fn: () => T, maxDatabaseBytes?: number): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof UnprocessableError || err instanceof PayloadTooLargeError || !(err instanceof Error) || isEngineCrash(err))
      throw err;
    if (err.message === 'out of memory' || err.message === 'string or blob too big') {
      throw new PayloadTooLargeError(`SQL error: the statement exceeded the memory limit (${err.message}) and was stopped`);
    }
    if (err.message === 'database or disk is full' && maxDatabaseBytes !== undefined) {
      throw new PayloadTooLargeError(`SQL error: the database would exceed its size limit of ${maxDatabaseBytes} bytes`);
    }
    throw new UnprocessableError(`SQL error: ${err.message}`, { cause: err });
  }
}

/** WebAssembly traps and Emscripten aborts: the engine itself failed, not the SQL. */
function isEngineCrash(err: Error): boolean {
  return err.name === 'RuntimeError' || err.message.startsWith('Aborted(');
}
