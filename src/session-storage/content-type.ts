import { lookup } from 'mrmime';

/**
 * Extensions the media-type registry maps to another medium than an agent's workspace means
 * (`.ts` is MPEG transport stream there), or to a type RFC 9512 since replaced (`text/yaml`).
 */
const WORKSPACE_TYPES: Readonly<Record<string, string>> = {
  ts: 'text/plain',
  py: 'text/x-python',
  yaml: 'application/yaml',
  yml: 'application/yaml',
};

function typeByExtension(ext: string): string | undefined {
  const type = WORKSPACE_TYPES[ext] ?? lookup(ext);
  return type?.startsWith('text/') ? `${type}; charset=utf-8` : type;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The Content-Type stored for a file written without one (tool writes): by extension (the
 * mime-db registry, through mrmime), else `text/plain; charset=utf-8` for valid UTF-8 without
 * NUL bytes, else `application/octet-stream`.
 */
export function guessContentType(path: string, content: Uint8Array): string {
  const dot = path.lastIndexOf('.');
  const ext = dot > path.lastIndexOf('/') ? path.slice(dot + 1).toLowerCase() : '';
  const known = ext ? typeByExtension(ext) : undefined;
  if (known) return known;
  if (content.includes(0)) return 'application/octet-stream';
  try {
    utf8.decode(content);
    return 'text/plain; charset=utf-8';
  } catch {
    return 'application/octet-stream';
  }
}

/** A client-sent Content-Type worth storing: printable, bounded; otherwise null. */
export function cleanContentType(value: string | undefined): string | null {
  const v = value?.trim();
  if (!v || v.length > 255 || !/^[\x20-\x7e]+$/.test(v) || !/^[\w.+-]+\/[\w.+-]+/.test(v)) return null;
  return v;
}
