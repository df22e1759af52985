/**
 * Cross-origin access for browser clients (CORS_ALLOWED_ORIGINS;
 * docs/decisions/0051-cors.md). Off when the setting is empty: no policy object exists then, and
 * neither the transport nor the pipeline does any CORS work per request.
 *
 * Credentials are never allowed (no `Access-Control-Allow-Credentials`): callers authenticate
 * with bearer tokens in `Authorization` (or an SSE stream token in the URL), which browsers send
 * without the credentials mode; only cookies would need it, and the service sets none.
 */

/** Request headers a browser client may send cross-origin (the `Mcp-*` ones: MCP clients of /v1/mcp). */
export const CORS_ALLOWED_HEADERS =
  'Authorization, Content-Type, Last-Event-ID, Idempotency-Key, If-None-Match, X-Request-Id, Mcp-Protocol-Version, Mcp-Session-Id';
/** Response headers a cross-origin script may read (besides the CORS-safelisted ones); an MCP client reads its session id. */
export const CORS_EXPOSED_HEADERS =
  'Retry-After, ETag, Location, Content-Disposition, Allow, X-Request-Id, Idempotent-Replayed, Mcp-Session-Id';
/** How long a browser may cache a preflight answer (Chromium caps it at 2 hours). */
export const CORS_MAX_AGE_S = 600;

export interface CorsPolicy {
  /** Headers for every response (preflight or not) to a request with this Origin (undefined: none). */
  responseHeaders(origin: string | undefined): readonly (readonly [string, string])[];
  /** Whether a browser on `origin` may call the API. */
  allows(origin: string): boolean;
}

/**
 * Parses CORS_ALLOWED_ORIGINS: `*`, or comma-separated exact origins (`https://app.example`,
 * `http://localhost:5173`). Returns null for an empty value (CORS off); throws RangeError
 * naming the first entry that is not an origin.
 */
export function parseCorsOrigins(spec: string): CorsPolicy | null {
  const entries = spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (entries.length === 0) return null;
  if (entries.includes('*')) {
    if (entries.length > 1) throw new RangeError('"*" must stand alone');
    return anyOriginPolicy();
  }
  return listedOriginsPolicy(new Set(entries.map(normaliseOrigin)));
}

/** `scheme://host[:port]` exactly as a browser sends it in `Origin` (lower case, no default port, no path). */
function normaliseOrigin(entry: string): string {
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    throw new RangeError(`"${entry}" is not an origin (scheme://host[:port])`);
  }
  const onlyOrigin =
    url.pathname === '/' && !url.search && !url.hash && !url.username && !url.password && !entry.endsWith('?') && !entry.endsWith('#');
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !onlyOrigin) {
    throw new RangeError(`"${entry}" is not an origin (scheme://host[:port])`);
  }
  return url.origin;
}

const EXPOSE = ['Access-Control-Expose-Headers', CORS_EXPOSED_HEADERS] as const;
const VARY_ORIGIN = ['Vary', 'Origin'] as const;
const NONE: readonly (readonly [string, string])[] = [];

function anyOriginPolicy(): CorsPolicy {
  // The same answer for every origin, so shared caches need no `Vary: Origin`.
  const headers = [['Access-Control-Allow-Origin', '*'] as const, EXPOSE];
  return {
    responseHeaders: (origin) => (origin === undefined ? NONE : headers),
    allows: () => true,
  };
}

function listedOriginsPolicy(origins: ReadonlySet<string>): CorsPolicy {
  // Header lists built once per origin; a response's headers then cost a map lookup.
  const allowed = new Map([...origins].map((o) => [o, [['Access-Control-Allow-Origin', o] as const, VARY_ORIGIN, EXPOSE]] as const));
  // Answers differ by Origin, so every response says so, also those that allow nothing.
  const refused = [VARY_ORIGIN];
  return {
    responseHeaders: (origin) => (origin === undefined ? refused : (allowed.get(origin) ?? refused)),
    allows: (origin) => allowed.has(origin),
  };
}

/** The headers of a preflight answer from an allowed origin, for a path with these methods. */
export function preflightHeaders(methods: readonly string[]): Record<string, string> {
  return {
    'Access-Control-Allow-Methods': methods.join(', '),
    'Access-Control-Allow-Headers': CORS_ALLOWED_HEADERS,
    'Access-Control-Max-Age': String(CORS_MAX_AGE_S),
  };
}
