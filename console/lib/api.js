// The API client of the console: one fetch wrapper that adds the caller's credential, turns
// error answers into ApiError, and refreshes an expired login once. Credentials live in
// sessionStorage (this tab only; gone when the tab closes) and go out only in `Authorization`.

const PREFIX = document.querySelector('meta[name="api-prefix"]')?.getAttribute('content') ?? '';
const STORAGE_KEY = 'ass-console-credential';

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
  }
}

/** `{kind: 'api_key', key}` or `{kind: 'login', access_token, refresh_token}`; null when signed out. */
let credential = readCredential();

function readCredential() {
  try {
    return JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null');
  } catch {
    return null;
  }
}

function storeCredential(value) {
  credential = value;
  if (value) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(value));
  else sessionStorage.removeItem(STORAGE_KEY);
}

export function hasCredential() {
  return credential !== null;
}

/** An API URL with the prefix; array values become repeated keys (`types=a&types=b`). */
export function apiUrl(path, query = {}) {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null || v === '') continue;
    for (const item of Array.isArray(v) ? v : [v]) qs.append(k, String(item));
  }
  const s = qs.toString();
  return PREFIX + path + (s ? `?${s}` : '');
}

function bearer() {
  if (!credential) return undefined;
  return `Bearer ${credential.kind === 'api_key' ? credential.key : credential.access_token}`;
}

/**
 * One API call. `body` is sent as JSON, `raw` as is with `contentType`. Answers JSON (or text for
 * non-JSON bodies, a Blob with `as: 'blob'`, null for 204). Throws ApiError with the service's
 * `error` message.
 */
export async function api(method, path, { query, body, raw, contentType, as, retried = false } = {}) {
  const headers = {};
  const auth = bearer();
  if (auth) headers.Authorization = auth;
  let payload;
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    payload = JSON.stringify(body);
  } else if (raw !== undefined) {
    headers['Content-Type'] = contentType ?? 'text/plain';
    payload = raw;
  }
  const res = await fetch(apiUrl(path, query), { method, headers, body: payload });
  if (res.status === 401 && credential?.kind === 'login' && !retried && (await refreshLogin())) {
    return api(method, path, { query, body, raw, contentType, as, retried: true });
  }
  if (res.status === 204) return null;
  if (as === 'blob' && res.ok) return res.blob();
  const type = res.headers.get('Content-Type') ?? '';
  const data = type.includes('json') ? await res.json() : await res.text();
  if (!res.ok) throw new ApiError(res.status, typeof data === 'object' && data?.error ? data.error : `HTTP ${res.status}`);
  return data;
}

async function refreshLogin() {
  const res = await fetch(apiUrl('/v1/auth/refresh'), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ refresh_token: credential.refresh_token }),
  });
  if (!res.ok) return false;
  const pair = await res.json();
  storeCredential({ kind: 'login', access_token: pair.access_token, refresh_token: pair.refresh_token });
  return true;
}

/** Checks an API key with GET /v1/auth/me and keeps it for this tab. */
export async function signInWithKey(key) {
  storeCredential({ kind: 'api_key', key: key.trim() });
  return whoAmI();
}

/** Exchanges email and password for a token pair (POST /v1/auth/login). */
export async function signInWithPassword(email, password) {
  storeCredential(null);
  const pair = await api('POST', '/v1/auth/login', { body: { email, password } });
  storeCredential({ kind: 'login', access_token: pair.access_token, refresh_token: pair.refresh_token });
  return whoAmI();
}

/** The caller and organisation; signs out on 401 (a revoked key, an ended login). */
export async function whoAmI() {
  try {
    return await api('GET', '/v1/auth/me');
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) storeCredential(null);
    throw err;
  }
}

export async function signOut() {
  if (credential?.kind === 'login') await api('POST', '/v1/auth/logout').catch(() => {});
  storeCredential(null);
}
