import { MAX_FILE_SIZE_LIMIT_BYTES, maxFileSizeBytes, type GrepResult } from '../../capabilities/index.js';
import { NotFoundError } from '../../errors.js';
import type { Principal } from '../../auth/index.js';
import { cleanContentType, normalizeEntryPath, normalizeFsPath, type FileRecord, type Storage } from '../../session-storage/index.js';
import type { GrepInput, MoveFileInput } from '../../../schemas/fs.js';

export { MAX_FILE_SIZE_LIMIT_BYTES };

/** Most matches one grep request returns. */
export const MAX_REST_GREP_MATCHES = 1000;
const SESSION_FILE_SYSTEM = 'session_file_system';

export type FileRead = { kind: 'file'; record: FileRecord; content: Buffer } | { kind: 'directory'; entries: FileRecord[] };

/** A file-store miss as the REST API words a 404 (spec 7: 'Not found'), with the path. */
function restNotFound(err: NotFoundError): NotFoundError {
  if (err.message.startsWith('Not found')) return err;
  const missing = /^(?:File not found|No such file or directory): (.*)$/s.exec(err.message);
  const detail = missing ? `no such file or directory: ${missing[1]}` : err.message.charAt(0).toLowerCase() + err.message.slice(1);
  return new NotFoundError(`Not found: ${detail}`, { cause: err });
}

/** The service with every 404 of the file store (worded for tools) reworded for REST. */
function withNotFoundMessages<S extends Record<string, (...args: never[]) => Promise<unknown>>>(service: S): S {
  const wrapped: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(service)) {
    wrapped[name] = (...args: never[]) =>
      method(...args).catch((err: unknown) => {
        throw err instanceof NotFoundError ? restNotFound(err) : err;
      });
  }
  return wrapped as S;
}

/**
 * The session file system over REST: the caller's session (404/403), which must have the
 * `file_system` feature (else 404), and client paths normalised (`..`, NUL → 400).
 */
export function createFsService({ storage }: { storage: Storage }) {
  async function filesOf(principal: Principal, sessionId: string) {
    const session = await storage.access.withFeature(principal, sessionId, 'file_system');
    return { session, files: storage.forSession(session).files };
  }

  return withNotFoundMessages({
    async list(principal: Principal, sessionId: string, recursive: boolean) {
      const { files } = await filesOf(principal, sessionId);
      const data = await files.list('/', { recursive });
      return { data, total: data.length };
    },

    /** A file's bytes, or a directory's listing. */
    async read(principal: Principal, sessionId: string, rawPath: string, recursive: boolean): Promise<FileRead> {
      const { files } = await filesOf(principal, sessionId);
      const path = normalizeFsPath(rawPath);
      const stat = await files.stat(path);
      if (!stat) throw new NotFoundError(`No such file or directory: ${path}`);
      if (stat.is_directory) return { kind: 'directory', entries: await files.list(path, { recursive }) };
      const { record, content } = await files.read(path);
      return { kind: 'file', record, content };
    },

    /** Creates or replaces a file (parents created); 413 over the capability's per-file limit or the quota. */
    async write(principal: Principal, sessionId: string, rawPath: string, content: Buffer, contentType: string | undefined) {
      const { session, files } = await filesOf(principal, sessionId);
      const path = normalizeEntryPath(rawPath);
      const config = await storage.access.capabilityConfig(session, SESSION_FILE_SYSTEM);
      return files.write(path, content, {
        maxFileBytes: maxFileSizeBytes(config),
        contentType: cleanContentType(contentType) ?? 'application/octet-stream',
      });
    },

    async remove(principal: Principal, sessionId: string, rawPath: string, recursive: boolean): Promise<void> {
      const { files } = await filesOf(principal, sessionId);
      await files.delete(normalizeEntryPath(rawPath), { recursive });
    },

    async move(principal: Principal, sessionId: string, input: MoveFileInput): Promise<FileRecord> {
      const { files } = await filesOf(principal, sessionId);
      return files.move(normalizeEntryPath(input.src_path), normalizeEntryPath(input.dst_path), { overwrite: input.overwrite === true });
    },

    async copy(principal: Principal, sessionId: string, input: MoveFileInput): Promise<FileRecord> {
      const { files } = await filesOf(principal, sessionId);
      return files.copy(normalizeEntryPath(input.src_path), normalizeEntryPath(input.dst_path), { overwrite: input.overwrite === true });
    },

    async grep(principal: Principal, sessionId: string, input: GrepInput) {
      const { files } = await filesOf(principal, sessionId);
      const results = await files.grep(input.pattern, {
        path: normalizeFsPath(input.path ?? '/'),
        ...(input.path_pattern ? { path_pattern: input.path_pattern } : {}),
        ignore_case: input.ignore_case === true,
        max_matches: MAX_REST_GREP_MATCHES + 1,
      });
      return capMatches(results);
    },

    async stat(principal: Principal, sessionId: string, rawPath: string): Promise<FileRecord> {
      const { files } = await filesOf(principal, sessionId);
      const path = normalizeFsPath(rawPath);
      const stat = await files.stat(path);
      if (!stat) throw new NotFoundError(`No such file or directory: ${path}`);
      return stat;
    },
  });
}

export type FsService = ReturnType<typeof createFsService>;

function capMatches(results: GrepResult[]) {
  let left = MAX_REST_GREP_MATCHES;
  let truncated = false;
  const data = [];
  for (const r of results) {
    if (left <= 0) {
      truncated = true;
      break;
    }
    if (r.matches.length > left) truncated = true;
    const matches = r.matches.slice(0, left);
    left -= matches.length;
    data.push({ path: r.path, matches });
  }
  return { data, total: data.length, truncated };
}
