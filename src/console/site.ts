import { fileURLToPath } from 'node:url';
import { EVENT_TYPES } from '../../schemas/event-types.js';
import { loadStaticSite, type StaticSite } from '../http/index.js';
import { PACKAGE_ROOT } from '../package-root.js';

/** Where the console is served (docs/operations.md, "Web console"). */
export const CONSOLE_MOUNT = '/console';

/** The browser code: plain ES modules in the repository, served as they are (no build step). */
const CONSOLE_ROOT = fileURLToPath(new URL('console', PACKAGE_ROOT));

/**
 * Preact, its hooks and htm in one dependency-free ES module, served from node_modules (npm
 * `htm`), so the browser needs no import map and no bundler.
 */
const VENDOR = { 'vendor/preact-htm.js': fileURLToPath(import.meta.resolve('htm/preact/standalone')) };

/**
 * The web console's files. `index.html` learns the API prefix from a `<meta>` tag filled in
 * here, once, at start (the page cannot guess a prefix a proxy added).
 */
export function createConsoleSite({ apiPrefix }: { apiPrefix: string }): StaticSite {
  return loadStaticSite({
    mount: CONSOLE_MOUNT,
    root: CONSOLE_ROOT,
    extra: VENDOR,
    // EventSource delivers named events only to listeners of that name, so the console needs the
    // service's whole list: made here from the catalogue rather than kept as a copy in console/.
    generated: { 'lib/event-types.js': `export const EVENT_TYPES = ${JSON.stringify(EVENT_TYPES)};\n` },
    transform: (path, body) =>
      path === 'index.html' ? Buffer.from(body.toString('utf8').replace('%API_PREFIX%', escapeAttribute(apiPrefix))) : body,
  });
}

function escapeAttribute(value: string): string {
  return value.replace(/[&"<>']/g, (c) => `&#${c.charCodeAt(0)};`);
}
