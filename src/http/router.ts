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

  function match(method: string, url: string): MatchResult {
    if (prefix && url.startsWith(prefix + '/v1')) url = url.slice(prefix.length);
    const parts = url.split('/').filter(Boolean);
    // Decoded once per request, not once per candidate route (null: not valid percent-encoding).
    const decoded = parts.map(safeDecode);
    const allow = new Set<string>();
    for (const c of compiled) {
      const params = matchSegments(c, parts, decoded);
      if (!params) continue;
      if (c.route.method === method) return { kind: 'found', match: { route: c.route, params } };
      allow.add(c.route.method);
    }
    return allow.size ? { kind: 'method_not_allowed', allow: [...allow] } : { kind: 'not_found' };
  }

  return { match, routes };
}

function score(c: CompiledRoute): number {
  const statics = c.segments.filter((s) => !s.startsWith(':')).length;
  return c.segments.length * 100 + statics * 10 + (c.rest ? 0 : 1);
}

function matchSegments(c: CompiledRoute, parts: string[], decoded: (string | null)[]): Record<string, string> | null {
  if (c.rest ? parts.length <= c.segments.length : parts.length !== c.segments.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < c.segments.length; i++) {
    const seg = c.segments[i]!;
    const part = decoded[i] ?? null;
    if (part === null) return null;
    if (seg.startsWith(':')) params[seg.slice(1)] = part;
    else if (seg !== part) return null;
  }
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
