import { createHash } from 'node:crypto';
import type { FileStat, GrepOptions, GrepResult, SessionFs } from '../capabilities/index.js';
import { ConflictError, InvalidRequestError, NotFoundError, PayloadTooLargeError, UnprocessableError } from '../errors.js';
import { newId } from '../ids.js';
import type { GrepPool } from '../offthread/index.js';
import { guessContentType } from './content-type.js';
import { ReadOnlyFileError } from './errors.js';
import { grepContents } from './fs-grep.js';
import { ancestorsOf, assertStoredPath, baseName, descendantRange } from './fs-paths.js';
import { UNCAPPED_ORG_STORAGE, type OrgStorageCap } from './org-storage.js';
import { bytes, inTransaction, iso, lockKey, num, type Query, type StorageDb } from './sql.js';

/** Default per-session quota: the spec's practical limit of about 100 MB. */
export const DEFAULT_SESSION_FS_QUOTA_BYTES = 100 * 1024 * 1024;

/** A file-system entry as the REST API shows it: the port's `FileStat` plus identity, type and ETag. */
export interface FileRecord extends FileStat {
  id: string | null;
  session_id: string;
  content_type: string | null;
  /** Quoted sha256 of the content (`"…"`); null for directories. */
  etag: string | null;
}

export interface FileWriteOptions {
  /** Stored Content-Type; default: the existing one on overwrite, else guessed from name and bytes. */
  contentType?: string;
  /** Largest accepted content in bytes (the capability's per-file limit) → 413 above it. */
  maxFileBytes?: number;
  /** Mark the file read-only (capability mounts); with `force`, also overwrite a read-only file. */
  readonly?: boolean;
  force?: boolean;
}

export interface SessionFilesScope {
  sessionId: string;
  orgId: string;
  /** Total bytes of all files of the session (default 100 MiB). */
  quotaBytes?: number;
  /** Where grep compiles and matches the caller's pattern and glob, off the event loop. */
  grepPool: GrepPool;
  /** The organisation's cap on what all its sessions store (default: none). */
  orgCap?: OrgStorageCap;
}

interface Row {
  id: string;
  session_id: string;
  path: string;
  is_directory: boolean;
  is_readonly: boolean;
  content_type: string | null;
  size_bytes: unknown;
  sha256: string | null;
  created_at: unknown;
  updated_at: unknown;
}

const META = 'id, session_id, path, is_directory, is_readonly, content_type, size_bytes, sha256, created_at, updated_at';

/**
 * One session's virtual file system on the `session_files` table. Every mutation runs in a
 * transaction holding the session's advisory lock, so quota checks and tree moves never race.
 * Paths must already be normalised (`fs-paths.ts`); see the `SessionFs` port for the contract.
 */
export function createSessionFiles(
  db: StorageDb,
  { sessionId, orgId, quotaBytes = DEFAULT_SESSION_FS_QUOTA_BYTES, grepPool, orgCap = UNCAPPED_ORG_STORAGE }: SessionFilesScope,
) {
  const lock = (q: Query) => lockKey(q, `fs:${sessionId}`);
  const where = 'session_id = ? and (path = ? or (path >= ? and path < ?))';
  const subtree = (path: string) => [sessionId, path, ...descendantRange(path)];

  function toRecord(r: Row): FileRecord {
    return {
      id: r.id,
      session_id: r.session_id,
      path: r.path,
      name: baseName(r.path),
      is_directory: r.is_directory,
      is_readonly: r.is_readonly,
      size_bytes: num(r.size_bytes),
      content_type: r.content_type,
      etag: r.sha256 ? `"${r.sha256}"` : null,
      created_at: iso(r.created_at),
      updated_at: iso(r.updated_at),
    };
  }

  function rootRecord(): FileRecord {
    const now = new Date().toISOString();
    return {
      id: null,
      session_id: sessionId,
      path: '/',
      name: '',
      is_directory: true,
      is_readonly: false,
      size_bytes: 0,
      content_type: null,
      etag: null,
      created_at: now,
      updated_at: now,
    };
  }

  async function getRow(q: Query, path: string): Promise<Row | null> {
    const [row] = await q<Row>(`select ${META} from session_files where session_id = ? and path = ?`, [sessionId, path]);
    return row ?? null;
  }

  async function mustGet(q: Query, path: string): Promise<Row> {
    const row = await getRow(q, path);
    if (!row) throw new NotFoundError(`No such file or directory: ${path}`);
    return row;
  }

  /** 403 when the entry or anything below it is read-only. */
  async function refuseReadOnly(q: Query, path: string): Promise<void> {
    const [hit] = await q<{ path: string }>(
      `select path from session_files where ${where} and is_readonly order by path limit 1`,
      subtree(path),
    );
    if (hit) throw new ReadOnlyFileError(hit.path);
  }

  async function checkQuota(q: Query, delta: number): Promise<void> {
    if (delta <= 0) return;
    const [row] = await q<{ used: unknown }>('select coalesce(sum(size_bytes), 0) as used from session_files where session_id = ?', [
      sessionId,
    ]);
    const used = num(row?.used);
    if (used + delta > quotaBytes) {
      throw new PayloadTooLargeError(`Session file storage quota exceeded: ${used} of ${quotaBytes} bytes used, ${delta} more requested`);
    }
    await orgCap.check(q, orgId, delta);
  }

  async function ensureParents(q: Query, path: string): Promise<void> {
    const ancestors = ancestorsOf(path);
    if (ancestors.length === 0) return;
    const marks = ancestors.map(() => '?').join(', ');
    const found = await q<{ path: string; is_directory: boolean }>(
      `select path, is_directory from session_files where session_id = ? and path in (${marks})`,
      [sessionId, ...ancestors],
    );
    const file = found.find((r) => !r.is_directory);
    if (file) throw new ConflictError(`Not a directory: ${file.path}`);
    const have = new Set(found.map((r) => r.path));
    for (const dir of ancestors.filter((a) => !have.has(a))) {
      await q(
        `insert into session_files (id, session_id, organization_id, path, is_directory, is_readonly, size_bytes, created_at, updated_at)
        values (?, ?, ?, ?, true, false, 0, now(), now()) on conflict (session_id, path) do nothing`,
        [newId(), sessionId, orgId, dir],
      );
    }
  }

  async function removeSubtree(q: Query, path: string): Promise<void> {
    await q(`delete from session_files where ${where}`, subtree(path));
  }

  function checkTransfer(src: string, dst: string): void {
    assertStoredPath(src);
    assertStoredPath(dst);
    if (src === '/' || dst === '/') throw new InvalidRequestError('Invalid request: a file or directory path is required');
    if (src === dst) throw new UnprocessableError('Source and destination are the same');
    if (dst.startsWith(src + '/')) throw new UnprocessableError('Cannot move or copy a directory into itself');
  }

  /** Clears the destination for a move or copy (409 unless overwrite; 403 when read-only). Returns the bytes freed. */
  async function clearDestination(q: Query, dst: string, overwrite: boolean): Promise<number> {
    const existing = await getRow(q, dst);
    if (!existing) return 0;
    if (!overwrite) throw new ConflictError(`Destination exists: ${dst}`);
    await refuseReadOnly(q, dst);
    const [row] = await q<{ size: unknown }>(`select coalesce(sum(size_bytes), 0) as size from session_files where ${where}`, subtree(dst));
    await removeSubtree(q, dst);
    return num(row?.size);
  }

  const files = {
    sessionId,
    quotaBytes,

    async stat(path: string): Promise<FileRecord | null> {
      assertStoredPath(path);
      if (path === '/') return rootRecord();
      const row = await getRow(db.sql, path);
      return row ? toRecord(row) : null;
    },

    async read(path: string): Promise<{ record: FileRecord; content: Buffer }> {
      assertStoredPath(path);
      if (path === '/') throw new UnprocessableError('/ is a directory');
      const [row] = await db.sql<Row & { content: unknown }>(
        `select ${META}, content from session_files where session_id = ? and path = ?`,
        [sessionId, path],
      );
      if (!row) throw new NotFoundError(`File not found: ${path}`);
      if (row.is_directory) throw new UnprocessableError(`${path} is a directory`);
      return { record: toRecord(row), content: bytes(row.content) };
    },

    async write(path: string, content: Uint8Array, opts: FileWriteOptions = {}): Promise<{ record: FileRecord; created: boolean }> {
      assertStoredPath(path);
      if (path === '/') throw new ConflictError('/ is a directory');
      if (opts.maxFileBytes !== undefined && content.length > opts.maxFileBytes) {
        throw new PayloadTooLargeError(`File is ${content.length} bytes; the maximum file size is ${opts.maxFileBytes} bytes`);
      }
      return inTransaction(db, async (q) => {
        await lock(q);
        const existing = await getRow(q, path);
        if (existing?.is_directory) throw new ConflictError(`${path} is a directory`);
        if (existing?.is_readonly && !opts.force) throw new ReadOnlyFileError(path);
        await checkQuota(q, content.length - num(existing?.size_bytes ?? 0));
        await ensureParents(q, path);
        const sha = createHash('sha256').update(content).digest('hex');
        const type = opts.contentType ?? existing?.content_type ?? guessContentType(path, content);
        const readonly = opts.readonly ?? existing?.is_readonly ?? false;
        const data = Buffer.from(content.buffer, content.byteOffset, content.byteLength);
        const [row] = existing
          ? await q<Row>(
              `update session_files set content = ?, content_type = ?, size_bytes = ?, sha256 = ?, is_readonly = ?, updated_at = now()
              where id = ? returning ${META}`,
              [data, type, content.length, sha, readonly, existing.id],
            )
          : await q<Row>(
              `insert into session_files (id, session_id, organization_id, path, is_directory, is_readonly, content, content_type, size_bytes, sha256, created_at, updated_at)
              values (?, ?, ?, ?, false, ?, ?, ?, ?, ?, now(), now()) returning ${META}`,
              [newId(), sessionId, orgId, path, readonly, data, type, content.length, sha],
            );
        return { record: toRecord(row!), created: !existing };
      });
    },

    /** Creates a directory (and its parents); an existing directory is returned as is. */
    async mkdir(path: string): Promise<FileRecord> {
      assertStoredPath(path);
      if (path === '/') return rootRecord();
      return inTransaction(db, async (q) => {
        await lock(q);
        const existing = await getRow(q, path);
        if (existing && !existing.is_directory) throw new ConflictError(`Not a directory: ${path}`);
        if (existing) return toRecord(existing);
        await ensureParents(q, path);
        const [row] = await q<Row>(
          `insert into session_files (id, session_id, organization_id, path, is_directory, is_readonly, size_bytes, created_at, updated_at)
          values (?, ?, ?, ?, true, false, 0, now(), now()) returning ${META}`,
          [newId(), sessionId, orgId, path],
        );
        return toRecord(row!);
      });
    },

    async list(path: string, { recursive = false }: { recursive?: boolean } = {}): Promise<FileRecord[]> {
      assertStoredPath(path);
      if (path !== '/') {
        const row = await mustGet(db.sql, path);
        if (!row.is_directory) throw new UnprocessableError(`${path} is not a directory`);
      }
      const [lower, upper] = descendantRange(path);
      const direct = recursive ? '' : `and strpos(substr(path, char_length(?) + 1), '/') = 0`;
      const rows = await db.sql<Row>(
        `select ${META} from session_files where session_id = ? and path >= ? and path < ? ${direct} order by path`,
        recursive ? [sessionId, lower, upper] : [sessionId, lower, upper, lower],
      );
      return rows.map(toRecord);
    },

    async delete(path: string, { recursive = false }: { recursive?: boolean } = {}): Promise<void> {
      assertStoredPath(path);
      if (path === '/') throw new InvalidRequestError('Invalid request: the workspace root cannot be deleted');
      await inTransaction(db, async (q) => {
        await lock(q);
        const row = await mustGet(q, path);
        if (row.is_directory && !recursive) {
          const [child] = await q(`select 1 from session_files where session_id = ? and path >= ? and path < ? limit 1`, [
            sessionId,
            ...descendantRange(path),
          ]);
          if (child) throw new ConflictError(`Directory is not empty: ${path}`);
        }
        await refuseReadOnly(q, path);
        await removeSubtree(q, path);
      });
    },

    async move(src: string, dst: string, { overwrite = false }: { overwrite?: boolean } = {}): Promise<FileRecord> {
      checkTransfer(src, dst);
      return inTransaction(db, async (q) => {
        await lock(q);
        await mustGet(q, src);
        await refuseReadOnly(q, src);
        await clearDestination(q, dst, overwrite);
        await ensureParents(q, dst);
        await q(`update session_files set path = ? || substr(path, char_length(?) + 1), updated_at = now() where ${where}`, [
          dst,
          src,
          ...subtree(src),
        ]);
        return toRecord((await getRow(q, dst))!);
      });
    },

    async copy(src: string, dst: string, { overwrite = false }: { overwrite?: boolean } = {}): Promise<FileRecord> {
      checkTransfer(src, dst);
      return inTransaction(db, async (q) => {
        await lock(q);
        await mustGet(q, src);
        const freed = await clearDestination(q, dst, overwrite);
        const entries = await q<{ id: string; path: string; size_bytes: unknown }>(
          `select id, path, size_bytes from session_files where ${where} order by path`,
          subtree(src),
        );
        await checkQuota(q, entries.reduce((sum, e) => sum + num(e.size_bytes), 0) - freed);
        await ensureParents(q, dst);
        for (const e of entries) {
          await q(
            `insert into session_files (id, session_id, organization_id, path, is_directory, is_readonly, content, content_type, size_bytes, sha256, created_at, updated_at)
            select ?, session_id, organization_id, ?, is_directory, false, content, content_type, size_bytes, sha256, now(), now() from session_files where id = ?`,
            [newId(), dst + e.path.slice(src.length), e.id],
          );
        }
        return toRecord((await getRow(q, dst))!);
      });
    },

    async grep(pattern: string, opts: GrepOptions = {}): Promise<GrepResult[]> {
      const base = opts.path ?? '/';
      assertStoredPath(base);
      const search = grepPool.search({ org: orgId, key: sessionId });
      const lines = await search.compile({ regex: pattern, ignoreCase: opts.ignore_case === true });
      const paths = opts.path_pattern ? await search.compile({ glob: opts.path_pattern }) : undefined;
      let candidates = await db.sql<{ id: string; path: string }>(
        `select id, path from session_files where ${where} and not is_directory order by path`,
        subtree(base),
      );
      if (paths) candidates = (await paths.match(candidates.map((c) => c.path))).map((i) => candidates[i]!);
      return grepContents(db, candidates, lines, opts.max_matches ?? Number.POSITIVE_INFINITY);
    },

    /** Bytes used by all files of the session. */
    async usedBytes(): Promise<number> {
      const [row] = await db.sql<{ used: unknown }>('select coalesce(sum(size_bytes), 0) as used from session_files where session_id = ?', [
        sessionId,
      ]);
      return num(row?.used);
    },
  };
  return files;
}

export type SessionFiles = ReturnType<typeof createSessionFiles>;

/** The `FileStat` of the port (no identity, type or ETag). */
export function toFileStat(r: FileRecord): FileStat {
  return {
    path: r.path,
    name: r.name,
    is_directory: r.is_directory,
    is_readonly: r.is_readonly,
    size_bytes: r.size_bytes,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

/** The session's files behind the capability port `SessionFs`. */
export function sessionFsPort(files: SessionFiles): SessionFs {
  return {
    async stat(path) {
      const r = await files.stat(path);
      return r ? toFileStat(r) : null;
    },
    async read(path) {
      const { record, content } = await files.read(path);
      return { stat: toFileStat(record), content };
    },
    async write(path, content) {
      const { record, created } = await files.write(path, content);
      return { stat: toFileStat(record), created };
    },
    async list(path, opts) {
      return (await files.list(path, opts)).map(toFileStat);
    },
    delete: (path, opts) => files.delete(path, opts),
    move: async (src, dst, opts) => toFileStat(await files.move(src, dst, opts)),
    copy: async (src, dst, opts) => toFileStat(await files.copy(src, dst, opts)),
    grep: (pattern, opts) => files.grep(pattern, opts),
  };
}
