import { InvalidRequestError } from '../errors.js';

export const MAX_FS_PATH_LENGTH = 1024;
export const MAX_FS_SEGMENT_LENGTH = 255;
/** Clients may prefix paths with the workspace root; `/workspace/a.txt` is `/a.txt`. */
export const WORKSPACE_ROOT = '/workspace';

/**
 * Turns a client path (REST path tail or body field, already URL-decoded) into the stored form:
 * absolute, under the workspace root, no empty or `.` segments, no trailing slash. `..`
 * segments, NUL and other control characters are refused (400), never resolved.
 */
export function normalizeFsPath(input: string): string {
  if (input.length > MAX_FS_PATH_LENGTH) throw new InvalidRequestError('Invalid request: path is too long');
  if (/[\u0000-\u001f\u007f]/.test(input)) throw new InvalidRequestError('Invalid request: path contains control characters');
  const segments: string[] = [];
  for (const segment of input.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') throw new InvalidRequestError('Invalid request: path must not contain ".."');
    if (segment.length > MAX_FS_SEGMENT_LENGTH) throw new InvalidRequestError('Invalid request: a path segment is too long');
    segments.push(segment);
  }
  if (segments[0] === WORKSPACE_ROOT.slice(1)) segments.shift();
  return '/' + segments.join('/');
}

/** `normalizeFsPath` that refuses the root itself (operations on one file or directory). */
export function normalizeEntryPath(input: string): string {
  const path = normalizeFsPath(input);
  if (path === '/') throw new InvalidRequestError('Invalid request: a file or directory path is required');
  return path;
}

/** Guards the storage layer: callers pass only normalised paths. */
export function assertStoredPath(path: string): void {
  if (!path.startsWith('/') || normalizeFsPath(path) !== path) throw new InvalidRequestError('Invalid request: path is not normalised');
}

/** The parent directory (`/` for top-level entries and the root). */
export function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i <= 0 ? '/' : path.slice(0, i);
}

/** The last segment (`''` for the root). */
export function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** Every ancestor directory below the root, outermost first: `/a/b/c` → `/a`, `/a/b`. */
export function ancestorsOf(path: string): string[] {
  const out: string[] = [];
  for (let i = path.indexOf('/', 1); i > 0; i = path.indexOf('/', i + 1)) out.push(path.slice(0, i));
  return out;
}

/**
 * The bytewise key range `[lower, upper)` of the strict descendants of `dir` ("C" collation):
 * `/a` → `['/a/', '/a0']` ('0' is the byte after '/'); the root's range holds every path.
 */
export function descendantRange(dir: string): [string, string] {
  return dir === '/' ? ['/', '0'] : [dir + '/', dir + '0'];
}
