import { ToolError } from '../types.js';

export const MAX_PATH_LENGTH = 1024;
export const MAX_SEGMENT_LENGTH = 255;
/** The name agents see for the workspace root; `/workspace/a.txt` and `/a.txt` are the same file. */
export const WORKSPACE_ALIAS = '/workspace';

/**
 * Turns an agent-supplied path into the normalised absolute form of the `SessionFs` port:
 * relative paths start at the root, `/workspace` is an alias of `/`, `.` and `..` are
 * resolved (never above the root), duplicate and trailing slashes dropped.
 */
export function normalizeSessionPath(input: string): string {
  const raw = input.trim();
  if (raw === '') throw new ToolError('Path must not be empty.');
  if (raw.length > MAX_PATH_LENGTH) throw new ToolError(`Path is longer than ${MAX_PATH_LENGTH} characters.`);
  if (/[\u0000-\u001f\u007f]/.test(raw)) throw new ToolError('Path must not contain control characters.');
  const segments: string[] = [];
  for (const segment of stripAlias(raw).split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (segments.length === 0) throw new ToolError(`Path "${input}" points outside the workspace.`);
      segments.pop();
      continue;
    }
    if (segment.length > MAX_SEGMENT_LENGTH) throw new ToolError(`A path segment is longer than ${MAX_SEGMENT_LENGTH} characters.`);
    segments.push(segment);
  }
  return '/' + segments.join('/');
}

/** `normalizeSessionPath`, refusing the root (for operations on a single file or directory). */
export function normalizeEntryPath(input: string): string {
  const path = normalizeSessionPath(input);
  if (path === '/') throw new ToolError('This operation needs a file or directory path, not the workspace root.');
  return path;
}

function stripAlias(path: string): string {
  if (path === WORKSPACE_ALIAS || path === 'workspace') return '/';
  if (path.startsWith(WORKSPACE_ALIAS + '/')) return path.slice(WORKSPACE_ALIAS.length);
  return path;
}
