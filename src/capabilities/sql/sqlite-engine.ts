/**
 * SQLite for `session_sql_database`, in WebAssembly (sql.js). A database is an in-memory copy
 * of a file's bytes: the storage layer loads the bytes per (session, name), runs the call and,
 * after `exec`, saves `export()`. Databases share nothing: each is its own SQLite connection on
 * its own file, and statements that reach other files (ATTACH, DETACH, VACUUM INTO) are refused.
 *
 * Caveat: sql.js runs on the calling thread and cannot interrupt a statement, so a runaway
 * query blocks the event loop. Callers that take SQL from untrusted input should run the engine
 * in a worker thread with a deadline.
 */
import initSqlJs from 'sql.js';
import { UnprocessableError } from '../../errors.js';
import {
  MAX_SQL_QUERY_ROWS,
  type SqlExecResult,
  type SqlQueryResult,
  type SqlSchemaObject,
  type SqlValue,
} from '../storage-ports.js';
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

let loading: Promise<SqlJs> | undefined;

/** The WASM module is immutable code; it is loaded once per process and shared. */
function loadSqlJs(): Promise<SqlJs> {
  loading ??= initSqlJs().catch((err: unknown) => {
    loading = undefined;
    throw err;
  });
  return loading;
}

/** Opens a database from a file's bytes, or a new empty one for null. */
export async function openDatabase(bytes: Uint8Array | null): Promise<SqliteDatabase> {
  const SQL = await loadSqlJs();
  const db = sqlite(() => new SQL.Database(bytes ?? undefined));
  return {
    exec: (sql, params) => sqlite(() => execSql(db, sql, params)),
    query: (sql, params, opts) => sqlite(() => querySql(db, sql, params, opts?.limit)),
    schema: () => sqlite(() => readSchema(db)),
    export: () => db.export(),
    close: () => db.close(),
  };
}

function execSql(db: Database, sql: string, params?: SqlValue[]): SqlExecResult {
  refuseForbidden(sql);
  const atomic = !managesTransactions(sql);
  const before = scalar(db, 'SELECT total_changes()');
  if (atomic) db.run('SAVEPOINT exec_call');
  try {
    runStatements(db, sql, params);
    if (atomic) db.run('RELEASE exec_call');
  } catch (err) {
    if (atomic) rollbackTo(db, 'exec_call');
    else rollbackOpenTransaction(db);
    throw err;
  }
  return { changes: scalar(db, 'SELECT total_changes()') - before, last_insert_rowid: scalar(db, 'SELECT last_insert_rowid()') };
}

function runStatements(db: Database, sql: string, params?: SqlValue[]): void {
  const statements = db.iterateStatements(sql);
  let count = 0;
  for (const stmt of statements) {
    count++;
    try {
      if (params) {
        if (!isBlankSql(statements.getRemainingSQL())) throw new UnprocessableError('SQL error: params need exactly one statement');
        stmt.bind(params);
      }
      while (stmt.step());
    } finally {
      stmt.free();
    }
  }
  if (count === 0) throw new UnprocessableError('SQL error: no statement given');
}

function querySql(db: Database, sql: string, params: SqlValue[] | undefined, limit = MAX_SQL_QUERY_ROWS): SqlQueryResult {
  refuseForbidden(sql);
  if (!startsReadOnly(sql)) {
    throw new UnprocessableError('SQL error: queries must be read-only (SELECT, WITH, VALUES, PRAGMA, EXPLAIN); use exec to change data');
  }
  const max = Math.max(1, Math.min(limit, MAX_SQL_QUERY_ROWS));
  const before = scalar(db, 'SELECT total_changes()');
  db.run('SAVEPOINT query_call');
  try {
    const result = readRows(db, sql, params, max);
    if (scalar(db, 'SELECT total_changes()') !== before) {
      throw new UnprocessableError('SQL error: queries must be read-only; use exec to change data');
    }
    return result;
  } finally {
    rollbackTo(db, 'query_call');
  }
}

function readRows(db: Database, sql: string, params: SqlValue[] | undefined, max: number): SqlQueryResult {
  const statements = db.iterateStatements(sql);
  const first = statements.next();
  if (first.done) throw new UnprocessableError('SQL error: no statement given');
  const stmt: Statement = first.value;
  try {
    if (!isBlankSql(statements.getRemainingSQL())) throw new UnprocessableError('SQL error: a query must be exactly one statement');
    if (params) stmt.bind(params);
    const rows: SqlValue[][] = [];
    let truncated = false;
    while (stmt.step()) {
      if (rows.length === max) {
        truncated = true;
        break;
      }
      rows.push(stmt.get());
    }
    return { columns: stmt.getColumnNames(), rows, truncated };
  } finally {
    stmt.free();
  }
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
  db.run(`ROLLBACK TO ${savepoint}`);
  db.run(`RELEASE ${savepoint}`);
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

/** SQLite's own errors (bad SQL, constraint violations) become 422s; engine crashes pass through. */
function sqlite<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof UnprocessableError || !(err instanceof Error) || isEngineCrash(err)) throw err;
    throw new UnprocessableError(`SQL error: ${err.message}`, { cause: err });
  }
}

/** WebAssembly traps and Emscripten aborts: the engine itself failed, not the SQL. */
function isEngineCrash(err: Error): boolean {
  return err.name === 'RuntimeError' || err.message.startsWith('Aborted(');
}
