const BY_EXTENSION: Readonly<Record<string, string>> = {
  txt: 'text/plain; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  html: 'text/html; charset=utf-8',
  htm: 'text/html; charset=utf-8',
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  mjs: 'text/javascript; charset=utf-8',
  ts: 'text/plain; charset=utf-8',
  py: 'text/x-python; charset=utf-8',
  json: 'application/json',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  xml: 'application/xml',
  svg: 'image/svg+xml',
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  zip: 'application/zip',
};

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The Content-Type stored for a file written without one (tool writes): by extension, else
 * `text/plain; charset=utf-8` for valid UTF-8 without NUL bytes, else `application/octet-stream`.
 */
export function guessContentType(path: string, content: Uint8Array): string {
  const dot = path.lastIndexOf('.');
  const ext = dot > path.lastIndexOf('/') ? path.slice(dot + 1).toLowerCase() : '';
  const known = BY_EXTENSION[ext];
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
