/**
 * Storage ports the capability tools run against. The turn engine builds one set per session
 * (database-backed implementations live with the store); tests use the in-memory fakes in
 * `test/capabilities/fakes.ts`. Every method is scoped to the one session it was built for.
 *
 * Errors: an expected failure (missing path, existing destination, read-only file, quota)
 * is thrown as an `AppError` 4xx from `src/errors.ts` with a message that is safe to show a
 * client (`NotFoundError`, `ConflictError`, `UnprocessableError`, `PayloadTooLargeError`).
 * The tools turn those into `ToolError`s with the same message, and the REST layer into
 * 4xx responses. Anything else is treated as an internal failure.
 *
 * Timestamps are ISO 8601 strings (UTC, millisecond precision).
 */

// ---------------------------------------------------------------- file system

/**
 * Paths are normalised absolute POSIX paths of the session's virtual file system: they start
 * with `/`, contain no `.`/`..` segments, no empty segments and no trailing `/` (except the
 * root `/` itself). The root is the session workspace (shown to agents also as `/workspace`).
 * Directories exist implicitly as parents of files, or explicitly once created.
 */
export interface FileStat {
  path: string;
  /** Last path segment (`""` for the root). */
  name: string;
  is_directory: boolean;
  /** Read-only files come from capability mounts; writes, moves onto and deletes fail. */
  is_readonly: boolean;
  size_bytes: number;
  created_at: string;
  updated_at: string;
}

export interface GrepMatch {
  path: string;
  /** 1-based. */
  line_number: number;
  line: string;
}

export interface GrepResult {
  path: string;
  matches: GrepMatch[];
}

export interface GrepOptions {
  /** Only files under this directory (default `/`). */
  path?: string;
  /** Glob on the file path (`*` within a segment, `**` across segments), e.g. `**\/*.md`. */
  path_pattern?: string;
  ignore_case?: boolean;
  /** Stop after this many matches in total. */
  max_matches?: number;
}

export interface SessionFs {
  /** The entry at `path`, or null when nothing is there. */
  stat(path: string): Promise<FileStat | null>;
  /** A file's bytes. NotFoundError when absent; UnprocessableError for a directory. */
  read(path: string): Promise<{ stat: FileStat; content: Uint8Array }>;
  /**
   * Creates or replaces a file, creating missing parent directories. `created` tells which.
   * ConflictError when the path is read-only or a directory; PayloadTooLargeError over quota.
   */
  write(path: string, content: Uint8Array): Promise<{ stat: FileStat; created: boolean }>;
  /** Entries directly under a directory (all descendants with `recursive`), sorted by path. NotFoundError when absent. */
  list(path: string, opts?: { recursive?: boolean }): Promise<FileStat[]>;
  /** Deletes a file or directory. A non-empty directory needs `recursive` (else ConflictError). NotFoundError when absent. */
  delete(path: string, opts?: { recursive?: boolean }): Promise<void>;
  /** Moves/renames. ConflictError when the destination exists and `overwrite` is not set. */
  move(src: string, dst: string, opts?: { overwrite?: boolean }): Promise<FileStat>;
  /** Copies a file or a directory tree; the same rules as `move`. The copy is never read-only. */
  copy(src: string, dst: string, opts?: { overwrite?: boolean }): Promise<FileStat>;
  /**
   * Searches text files line by line with a regular expression `pattern` in RE2 syntax, run by
   * the linear-time engine of `src/patterns/` off the event loop (a bad or too complex pattern is a
   * 400 InvalidRequestError, a search past its time limit a 422).
   * Files in path order, only files with matches.
   */
  grep(pattern: string, opts?: GrepOptions): Promise<GrepResult[]>;
}

// ---------------------------------------------------------------- key/value

export interface KvEntry {
  key: string;
  /** Present only when the listing asked for values (`include_values`), and on `get`. */
  value?: string;
  created_at: string;
  updated_at: string;
}

export interface KvListOptions {
  /** Only keys starting with this. */
  prefix?: string;
  /** Page size (callers bound it; see MAX_KV_LIST_LIMIT). */
  limit?: number;
  offset?: number;
  /** Include each entry's value (default: names and timestamps only). */
  include_values?: boolean;
}

/** One page of entries, sorted by key, and how many match in all. */
export interface KvPage {
  entries: KvEntry[];
  total: number;
}

export const DEFAULT_KV_LIST_LIMIT = 100;
export const MAX_KV_LIST_LIMIT = 1000;

export interface SessionKv {
  /** The value, or null when the key is absent. */
  get(key: string): Promise<string | null>;
  /**
   * Creates or replaces. QuotaExceededError when the session would hold more entries (409) or
   * more key + value bytes (413) than its quota; then nothing changes.
   */
  set(key: string, value: string): Promise<void>;
  /** True when something was deleted. */
  delete(key: string): Promise<boolean>;
  /** A page of entries sorted by key (default the first DEFAULT_KV_LIST_LIMIT, no values). */
  list(opts?: KvListOptions): Promise<KvPage>;
}

// ---------------------------------------------------------------- secrets

/**
 * The names of the secrets a user's connection injects (`connection:<provider>`, spec 2.3).
 * Tools cannot overwrite or delete them, and only turns acting for the session's creator can use them.
 */
export const CONNECTION_SECRET_PREFIX = 'connection:';

/** A secret's name, hosts and timestamps; values are never listed. */
export interface SecretInfo {
  name: string;
  /** Host patterns the value may be sent to (secret-hosts.ts); empty: nowhere. */
  allowed_hosts: string[];
  created_at: string;
  updated_at: string;
}

/** A secret to use by reference: its value and where it may go. */
export interface SecretForUse {
  value: string;
  allowed_hosts: string[];
}

/** A secret to write. Without `allowed_hosts`, a replaced secret keeps its hosts and a new one has none. */
export interface SecretWrite {
  value: string;
  allowed_hosts?: readonly string[];
}

/** Encrypted at rest by the implementation (AES-256-GCM envelope, architecture 6). */
export interface SessionSecrets {
  /**
   * The decrypted value and its allowed hosts, or null when absent. Only for using a secret by
   * reference (e.g. a `{{secret:NAME}}` header of `fetch_url`); no tool returns it.
   */
  get(name: string): Promise<SecretForUse | null>;
  /** Creates or replaces; QuotaExceededError (409) past the session's secret count. */
  set(name: string, secret: SecretWrite): Promise<void>;
  delete(name: string): Promise<boolean>;
  /** Sorted by name. */
  list(): Promise<SecretInfo[]>;
  /** Every name with its decrypted value: only for redacting tool results, never shown. */
  allValues(): Promise<{ name: string; value: string }[]>;
}

// ---------------------------------------------------------------- SQL databases

/** A value bound to, or read from, SQLite. Blobs are bytes. */
export type SqlValue = number | string | Uint8Array | null;

export interface SqlExecResult {
  /** Rows inserted, updated or deleted by all statements together. */
  changes: number;
  last_insert_rowid: number;
}

export interface SqlQueryResult {
  columns: string[];
  rows: SqlValue[][];
  /** True when the statement produced more rows than the limit. */
  truncated: boolean;
}

export interface SqlColumnInfo {
  name: string;
  type: string;
  notnull: boolean;
  default_value: string | null;
  primary_key: boolean;
}

export interface SqlSchemaObject {
  name: string;
  type: 'table' | 'view' | 'index' | 'trigger';
  /** For indexes and triggers: the table they belong to. */
  table: string;
  sql: string | null;
  /** Tables and views only. */
  columns?: SqlColumnInfo[];
}

export interface SqlDatabaseInfo {
  name: string;
  size_bytes: number;
  created_at: string;
  updated_at: string;
}

/** Maximum rows a query returns (spec of `sql_query`). */
export const MAX_SQL_QUERY_ROWS = 1000;

/** One open SQLite database of the session. Close it when done (it may hold engine memory). */
export interface SessionSqlDatabase {
  /** Runs one or more statements; with `params`, exactly one statement. Changes are persisted. */
  exec(sql: string, params?: SqlValue[]): Promise<SqlExecResult>;
  /** Runs one read-only statement; at most `limit` rows (default and maximum 1000). Nothing is persisted. */
  query(sql: string, params?: SqlValue[], opts?: { limit?: number }): Promise<SqlQueryResult>;
  /** Tables, views, indexes and triggers (internal `sqlite_*` objects excluded). */
  schema(): Promise<SqlSchemaObject[]>;
  close(): Promise<void>;
}

/**
 * Named SQLite databases per session. Names match `^[A-Za-z0-9_]{1,64}$` (callers check).
 * Implementations serialise writers per (session, name) and persist the database bytes
 * (see `src/capabilities/sql/sqlite-engine.ts`).
 */
export interface SessionSql {
  /** Sorted by name. */
  list(): Promise<SqlDatabaseInfo[]>;
  /** Opens a database; with `create`, an absent one is created empty, else NotFoundError. */
  open(name: string, opts?: { create?: boolean }): Promise<SessionSqlDatabase>;
}

// ---------------------------------------------------------------- schedules

export type ScheduleKind = 'once' | 'cron';
export type ScheduleStatus = 'active' | 'completed' | 'cancelled';

export interface CreateScheduleInput {
  name: string;
  /** The user message delivered to the session each time the schedule fires. */
  message: string;
  kind: ScheduleKind;
  /** `once`: the instant (ISO 8601, UTC). */
  scheduled_at: string | null;
  /** `cron`: a 5-field cron expression. */
  cron_expression: string | null;
  /** IANA time zone the cron expression is read in. */
  timezone: string;
  /** The first firing, computed by the caller. */
  next_run_at: string;
  /** The implementation refuses (ConflictError) when this many schedules are already active. */
  max_active: number;
}

export interface ScheduleInfo {
  id: string;
  name: string;
  message: string;
  kind: ScheduleKind;
  scheduled_at: string | null;
  cron_expression: string | null;
  timezone: string;
  status: ScheduleStatus;
  /** Null once the schedule is no longer active. */
  next_run_at: string | null;
  last_run_at: string | null;
  created_at: string;
}

export interface SessionSchedules {
  /** Stores an active schedule; ConflictError when `input.max_active` are already active. */
  create(input: CreateScheduleInput): Promise<ScheduleInfo>;
  /** Marks it cancelled and returns it. NotFoundError when absent; ConflictError when not active. */
  cancel(id: string): Promise<ScheduleInfo>;
  /** Active schedules by next run (all, newest last, with `include_inactive`). */
  list(opts?: { include_inactive?: boolean }): Promise<ScheduleInfo[]>;
}
