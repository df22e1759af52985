import { createHash } from 'node:crypto';
import { newToken } from '../ids.js';

/** Prefix of every generated API key, so leaked keys are recognisable by scanners. */
export const API_KEY_PREFIX = 'ask_';

/** API keys are stored as SHA-256 only; the plain key is shown once, at creation. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** A new random API key (32 random bytes) and its display prefix. */
export function generateApiKey(): { key: string; prefix: string } {
  const key = newToken(API_KEY_PREFIX, 32);
  return { key, prefix: displayPrefix(key) };
}

export function displayPrefix(key: string): string {
  return key.slice(0, 12);
}
