import type { Route } from './route.js';

export interface RouteMatch {
  route: Route;
  params: Record<string, string>;
}

export type MatchResult = { kind: 'found'; match: RouteMatch } | { kind: 'method_not_allowed'; allow: string[] } | { kind: 'not_found' };

interface CompiledRoute {
  route: Route;
  segments: string[];
  /** Name of a trailing catch-all param (`*path`), if any. */
  rest?: string;
}

/** Matches a method and path against the route table; static segments win over params. */
export function createRouter(routes: Route[], prefix = '') {
  const compiled: CompiledRoute[] = routes.map((route) => {
    const segments = route.path.split('/').filter(Boolean);
    const last = segments.at(-1);
    if (last?.startsWith('*')) return { route, segments: segments.slice(0, -1), rest: last.slice(1) };
    return { route, segments };
  });
  // More static segments first, so `/v1/sessions/chat` beats `/v1/sessions/:id`.
  compiled.sort((a, b) => score(b) - score(a));
  // A path can only match routes with as many segments (catch-alls aside) and, where a route's
  // first two segments are static, the same two. Each bucket keeps `score` order: its
  // static-prefix routes merged with the same-length routes that have a param there. Exact routes
  // always outrank catch-alls (more segments), so trying catch-alls last keeps that order too.
  const exact = compiled.filter((c) => !c.rest);
  const prefixed = (c: CompiledRoute) => c.segments.length >= 2 && c.segments[0]![0] !== ':' && c.segments[1]![0] !== ':';
  const byLength = new Map<number, CompiledRoute[]>();
  for (const c of exact) if (!prefixed(c)) byLength.set(c.segments.length, [...(byLength.get(c.segments.length) ?? []), c]);
  const byPrefix = new Map<string, CompiledRoute[]>();
  for (const c of exact.filter(prefixed)) {
    const key = bucketKey(c.segments.length, c.segments[0]!, c.segments[1]!);
    byPrefix.set(
      key,
      byPrefix.get(key) ??
        exact.filter(
          (o) =>
            o.segments.length === c.segments.length &&
            (!prefixed(o) || bucketKey(o.segments.length, o.segments[0]!, o.segments[1]!) === key),
        ),
    );
  }
  const catchAlls = compiled.filter((c) => c.rest);

  function match(method: string, url: string): MatchResult {
    if (prefix && url.startsWith(prefix + '/v1')) url = url.slice(prefix.length);
    const parts = url.split('/').filter(Boolean);
    // Decoded once per request, not once per candidate route (null: not valid percent-encoding).
    const decoded = url.includes('%') ? parts.map(safeDecode) : parts;
    const n = parts.length;
    const candidates = (n >= 2 && byPrefix.get(bucketKey(n, decoded[0], decoded[1]))) || byLength.get(n);
    const allow = new Set<string>();
    const found =
      (candidates && firstMatch(candidates, method, parts, decoded, allow)) || firstMatch(catchAlls, method, parts, decoded, allow);
    if (found) return found;
    return allow.size ? { kind: 'method_not_allowed', allow: [...allow] } : { kind: 'not_found' };
  }

  return { match, routes };
}

/** The first route of `list` matching path and method; methods of path-only matches go to `allow`. */
function firstMatch(
  list: CompiledRoute[],
  method: string,
  parts: string[],
  decoded: (string | null)[],
  allow: Set<string>,
): MatchResult | undefined {
  for (const c of list) {
    const params = matchSegments(c, parts, decoded);
    if (!params) continue;
    if (c.route.method === method) return { kind: 'found', match: { route: c.route, params } };
    allow.add(c.route.method);
  }
  return undefined;
}

function bucketKey(length: number, first: string | null | undefined, second: string | null | undefined): string {
  return `${length}/${first}/${second}`;
}

function score(c: CompiledRoute): number {
  const statics = c.segments.filter((s) => !s.startsWith(':')).length;
  return c.segments.length * 100 + statics * 10 + (c.rest ? 0 : 1);
}

function matchSegments(c: CompiledRoute, parts: string[], decoded: (string | null)[]): Record<string, string> | null {
  if (c.rest ? parts.length <= c.segments.length : parts.length !== c.segments.length) return null;
  for (let i = 0; i < c.segments.length; i++) {
    const seg = c.segments[i]!;
    if (decoded[i] === null || (seg[0] !== ':' && seg !== decoded[i])) return null;
  }
  const params: Record<string, string> = {};
  for (let i = 0; i < c.segments.length; i++) if (c.segments[i]![0] === ':') params[c.segments[i]!.slice(1)] = decoded[i]!;
  if (c.rest) {
    const rest = safeDecode(parts.slice(c.segments.length).join('/'));
    if (rest === null) return null;
    params[c.rest] = rest;
  }
  return params;
}

function safeDecode(s: string): string | null {
  if (!s.includes('%')) return s; // nothing to decode; decodeURIComponent would return it unchanged
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

export type Router = ReturnType<typeof createRouter>;
