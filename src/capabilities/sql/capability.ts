import { Type } from '@sinclair/typebox';
import { defineCapability, defineTool, jsonResult } from '../define.js';
import { MAX_SQL_QUERY_ROWS, type SessionSql, type SessionSqlDatabase, type SqlValue } from '../storage-ports.js';
import { ToolError } from '../types.js';

export const SESSION_SQL_DATABASE_ID = 'session_sql_database';
/** Database names: letters, digits and underscores, 1 to 64 characters. */
export const SQL_DATABASE_NAME_RE = /^[A-Za-z0-9_]{1,64}$/;
export const MAX_SQL_LENGTH = 100_000;

const DatabaseArg = Type.String({ description: 'Database name: letters, digits, underscores, max 64 (e.g. "main", "crm_data").' });
const SqlArg = Type.String({ minLength: 1, maxLength: MAX_SQL_LENGTH, description: 'SQLite SQL.' });
const ParamsArg = Type.Optional(
  Type.Array(Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]), {
    maxItems: 999,
    description: 'Values for ? placeholders, in order. Use them instead of inlining values.',
  }),
);

const sqlExecute = defineTool({
  name: 'sql_execute',
  display_name: 'Execute SQL',
  description:
    'Runs SQL that changes a database (CREATE, INSERT, UPDATE, DELETE, ...). Several statements separated by ";" run atomically; with params, exactly one statement. The database is created on first use.',
  parameters: Type.Object({ database: DatabaseArg, sql: SqlArg, params: ParamsArg }, { additionalProperties: false }),
  async run(args, { sql }) {
    const params = args.params?.map(toSqlValue);
    const result = await withDatabase(sql, args.database, true, (db) => db.exec(args.sql, params));
    return jsonResult({ database: args.database, ...result });
  },
});

const sqlQuery = defineTool({
  name: 'sql_query',
  display_name: 'Query SQL',
  description: `Runs one read-only statement (SELECT, WITH, PRAGMA, ...) and returns columns and rows, at most ${MAX_SQL_QUERY_ROWS} rows (truncated is true when there were more).`,
  parameters: Type.Object(
    {
      database: DatabaseArg,
      sql: SqlArg,
      params: ParamsArg,
      limit: Type.Optional(
        Type.Integer({ minimum: 1, maximum: MAX_SQL_QUERY_ROWS, description: `Maximum rows. Default ${MAX_SQL_QUERY_ROWS}.` }),
      ),
    },
    { additionalProperties: false },
  ),
  async run(args, { sql }) {
    const params = args.params?.map(toSqlValue);
    const limit = args.limit ?? MAX_SQL_QUERY_ROWS;
    const result = await withDatabase(sql, args.database, false, (db) => db.query(args.sql, params, { limit }));
    const rows = result.rows.map((row) => row.map(toJsonValue));
    return jsonResult({ database: args.database, columns: result.columns, rows, row_count: rows.length, truncated: result.truncated });
  },
});

const sqlSchema = defineTool({
  name: 'sql_schema',
  display_name: 'SQL Schema',
  description:
    "Without database: lists the session's databases. With database: its tables, views, indexes and triggers with columns and CREATE statements.",
  parameters: Type.Object({ database: Type.Optional(DatabaseArg) }, { additionalProperties: false }),
  async run(args, { sql }) {
    if (args.database === undefined || args.database === '') return jsonResult({ databases: await sql.list() });
    const objects = await withDatabase(sql, args.database, false, (db) => db.schema());
    return jsonResult({ database: args.database, objects });
  },
});

async function withDatabase<T>(sql: SessionSql, name: string, create: boolean, fn: (db: SessionSqlDatabase) => Promise<T>): Promise<T> {
  if (!SQL_DATABASE_NAME_RE.test(name)) {
    throw new ToolError(`Invalid database name "${name}": use 1-64 letters, digits or underscores.`);
  }
  const db = await sql.open(name, { create });
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

function toSqlValue(value: string | number | boolean | null): SqlValue {
  return typeof value === 'boolean' ? (value ? 1 : 0) : value;
}

/** Blobs become `{blob_base64}` so rows stay JSON. */
function toJsonValue(value: SqlValue): unknown {
  return value instanceof Uint8Array ? { blob_base64: Buffer.from(value).toString('base64') } : value;
}

export const sessionSqlDatabaseCapability = defineCapability({
  id: SESSION_SQL_DATABASE_ID,
  name: 'SQL Database',
  description: 'Named SQLite databases that persist with the session: create tables, insert and query structured data.',
  prompt: [
    'This session has persistent SQLite databases, addressed by name (letters, digits, underscores).',
    'Use `sql_execute` to create tables and change data (the database is created on first use),',
    `\`sql_query\` for one read-only statement (at most ${MAX_SQL_QUERY_ROWS} rows; aggregate or page with LIMIT/OFFSET for more),`,
    'and `sql_schema` to see the databases and their tables. Pass values as params with ? placeholders.',
    'Statements that run too long or need too much memory are stopped with an error and change nothing; keep queries bounded.',
  ].join(' '),
  tools: [sqlExecute, sqlQuery, sqlSchema],
  configSchema: Type.Object({}, { additionalProperties: false }),
  features: ['sql_database'],
});
