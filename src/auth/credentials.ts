/**
 * Extracts the credential from an Authorization header. Accepts `Bearer <x>`, `ApiKey <x>`
 * (clients of the earlier API send it) and a bare `<x>`.
 */
export function parseAuthorization(header: string | undefined): string | null {
  if (!header) return null;
  const value = header.trim();
  const m = /^(Bearer|ApiKey)\s+(\S+)$/i.exec(value);
  if (m) return m[2]!;
  return /^\S{16,}$/.test(value) ? value : null;
}

/** A JWT has three base64url parts; everything else is treated as an API key. */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);
}
