import type { CapabilityItemInput } from '../../../schemas/capabilities.js';
import type { InitialFileInput } from '../../../schemas/fs.js';
import { maxFileSizeBytes, normalizeCapabilityRef } from '../../capabilities/index.js';
import { InvalidRequestError, PayloadTooLargeError } from '../../errors.js';
import { normalizeEntryPath } from '../../session-storage/index.js';

/** A starter file checked and decoded: a stored path, its bytes, and whether it is read-only. */
export interface StarterFile {
  path: string;
  content: Buffer;
  readonly: boolean;
}

export interface StarterFileLimits {
  /** Largest file (the `session_file_system` capability's per-file limit). */
  maxFileBytes: number;
  /** The session file-system quota: a new session holds nothing yet, so all files together. */
  quotaBytes: number;
}

/** Strict base64 (RFC 4648, padded or not): Buffer.from would skip anything else silently. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;

/**
 * Checks and decodes the starter files of a session create before anything is written: paths
 * normalised like any file path (400), base64 decoded strictly (400), a later file of the same
 * path replaces the earlier one (the reference: session files override), a file cannot also be
 * another's directory (400), each within the per-file limit and all within the quota (413).
 */
export function decodeStarterFiles(files: readonly InitialFileInput[], limits: StarterFileLimits): StarterFile[] {
  const byPath = new Map<string, StarterFile>();
  files.forEach((file, i) => {
    const path = normalizeEntryPath(file.path);
    const content = decodeContent(file, i);
    if (content.length > limits.maxFileBytes)
      throw new PayloadTooLargeError(
        `initial_files[${i}] is ${content.length} bytes; the maximum file size is ${limits.maxFileBytes} bytes`,
      );
    byPath.delete(path); // re-inserted last: writes follow the request's order of final values
    byPath.set(path, { path, content, readonly: file.is_readonly === true });
  });
  const paths = new Set(byPath.keys());
  for (const path of paths) {
    for (let i = path.indexOf('/', 1); i > 0; i = path.indexOf('/', i + 1)) {
      if (paths.has(path.slice(0, i)))
        throw new InvalidRequestError(`Invalid request: initial_files has ${path.slice(0, i)} as a file and as the directory of ${path}`);
    }
  }
  const total = [...byPath.values()].reduce((sum, f) => sum + f.content.length, 0);
  if (total > limits.quotaBytes)
    throw new PayloadTooLargeError(`initial_files hold ${total} bytes; the session file storage quota is ${limits.quotaBytes} bytes`);
  return [...byPath.values()];
}

function decodeContent(file: InitialFileInput, i: number): Buffer {
  if ((file.encoding ?? 'text') === 'text') return Buffer.from(file.content, 'utf8');
  const compact = file.content.replace(/\s+/g, '');
  if (!BASE64.test(compact)) throw new InvalidRequestError(`Invalid request: initial_files[${i}].content is not valid base64`);
  return Buffer.from(compact, 'base64');
}

const FILE_SYSTEM = 'session_file_system';

/** The capability layers of a resolved session: harness, agent, then the session's own additions. */
interface ResolvedLayers {
  capabilities: readonly (string | { ref: string; config?: Record<string, unknown> })[];
  config: { harness: { capabilities: readonly CapabilityItemInput[] }; agent: { capabilities: readonly CapabilityItemInput[] } | null };
}

/** The per-file limit of the session's `session_file_system` (its configs merged as the turn merges them). */
export function starterFileLimit(setup: ResolvedLayers): number {
  const layers = [setup.config.harness.capabilities, setup.config.agent?.capabilities ?? [], setup.capabilities];
  const configs = layers
    .flat()
    .map((item) => normalizeCapabilityRef(item))
    .filter((item) => item.ref === FILE_SYSTEM)
    .map((item) => item.config);
  return maxFileSizeBytes(Object.assign({}, ...configs));
}

/** The session's own capabilities plus `session_file_system`: starter files need a file system to live in. */
export function withFileSystem<T>(capabilities: readonly T[] | undefined): (T | typeof FILE_SYSTEM)[] {
  return [...(capabilities ?? []), FILE_SYSTEM];
}
