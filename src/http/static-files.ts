import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { MethodNotAllowedError, NotFoundError } from '../errors.js';
import type { Stage } from './compose.js';
import type { Exchange } from './exchange.js';
import type { Reply } from './reply.js';

/**
 * Public static files under a mount path (the web console at /console;
 * docs/decisions/0061-web-console.md). Every file is read once when the site is built, so a request is a map lookup
 * on the exact path: nothing a client sends ever reaches the file system (no traversal, no
 * symlink games, no race with files changing underneath). Only the extensions of CONTENT_TYPES
 * are served; everything else under the folder is ignored.
 */

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * The page may load scripts, styles and images from its own origin only and call only its own
 * origin (the API); no inline script or style, no plugins, no framing, no `<base>`.
 */
export const STATIC_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const SECURITY_HEADERS = {
  'Content-Security-Policy': STATIC_CSP,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

/**
 * Files are not fingerprinted, so browsers revalidate every load (`no-cache` + ETag → 304):
 * a deploy is picked up at once, and an unchanged file costs a request without a body.
 */
const CACHE_CONTROL = 'no-cache';

interface StaticFile {
  body: Buffer;
  etag: string;
  headers: Record<string, string>;
}

export interface StaticSiteOptions {
  /** URL path the files are served under, e.g. `/console` (no trailing slash). */
  mount: string;
  /** Folder whose files (recursively) are served, by their path relative to it. */
  root: string;
  /** Extra files by URL path relative to the mount (e.g. a vendored module from node_modules). */
  extra?: Record<string, string>;
  /** Rewrites a file's text once at load (e.g. settings into index.html). */
  transform?: (path: string, body: Buffer) => Buffer;
  /** Files made at start by URL path relative to the mount (e.g. a module built from the service's own lists). */
  generated?: Record<string, string>;
}

export interface StaticSite {
  mount: string;
  /** URL paths relative to the mount that are served (`''` is the index). */
  paths(): string[];
  /** The reply for a request under the mount; null when the URL is not under it. */
  reply(method: string, url: string, ifNoneMatch: string | undefined): Reply | null;
}

/** Reads the site's files (synchronously: this runs once at start). */
export function loadStaticSite({ mount, root, extra = {}, transform, generated = {} }: StaticSiteOptions): StaticSite {
  const files = new Map<string, StaticFile>();
  const add = (path: string, absolute: string | Buffer) => {
    const type = CONTENT_TYPES[extname(path)];
    if (!type) return;
    const raw = typeof absolute === 'string' ? readFileSync(absolute) : absolute;
    const body = transform ? transform(path, raw) : raw;
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    files.set(path, { body, etag, headers: { ...SECURITY_HEADERS, 'Cache-Control': CACHE_CONTROL, ETag: etag, 'Content-Type': type } });
  };
  for (const rel of listFiles(root)) add(rel, join(root, rel));
  for (const [path, absolute] of Object.entries(extra)) add(path, absolute);
  for (const [path, text] of Object.entries(generated)) add(path, Buffer.from(text, 'utf8'));
  const index = files.get('index.html');
  if (index) files.set('', index);

  return {
    mount,
    paths: () => [...files.keys()],
    reply(method, url, ifNoneMatch) {
      if (url !== mount && !url.startsWith(mount + '/')) return null;
      const file = files.get(url.slice(mount.length + 1));
      if (!file) throw new NotFoundError();
      if (method !== 'GET') throw new MethodNotAllowedError(['GET']);
      if (ifNoneMatch?.split(',').some((t) => t.trim() === file.etag)) return { status: 304, headers: withoutContentType(file.headers) };
      return { status: 200, raw: file.body, contentType: file.headers['Content-Type']!, headers: withoutContentType(file.headers) };
    },
  };
}

function withoutContentType(headers: Record<string, string>): Record<string, string> {
  const { 'Content-Type': _, ...rest } = headers;
  return rest;
}

/** Paths of the regular files under `root`, relative and with `/` separators; dotfiles skipped. */
function listFiles(root: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(root, prefix), { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...listFiles(root, rel));
    else if (entry.isFile()) out.push(rel);
  }
  return out;
}

/** Serves the site's URLs before routing; they are not API operations (no route, no OpenAPI entry). */
export function staticStage(site: StaticSite): Stage<Exchange> {
  return function staticFiles(ex, next) {
    const reply = site.reply(ex.method, ex.url, ex.headers['if-none-match']);
    if (!reply) return next();
    ex.reply = reply;
    return Promise.resolve();
  };
}
